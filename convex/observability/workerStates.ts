import type { Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";

/**
 * The org's workers by what they do (farmhand_workers{state}) and their slots (farmhand_slots{state}), counted by
 * the summariser from the online workers' slot rows (lanes/workerSlots.ts): busy (running jobs), suspended (its
 * jobs frozen while its owner uses the machine), paused (it declared 0 slots: its owner paused it, or its daily
 * quota is spent), idle (online, waiting for work), offline (the rest). Free slots are those an online worker that
 * is neither paused nor suspended declared (its limit, for a worker the summary lists that declared none) and does
 * not use.
 */

/** Online workers told apart per summary, at most (one slot row read each): past them online workers count as idle. */
export const STATES_READ = 1_000;

export type WorkerStates = { idle: number; busy: number; suspended: number; paused: number; offline: number };
export type SlotStates = { free: number; busy: number };

/** `limits`: the slot limit of the workers whose rows the summary read anyway (its listed ones). */
export async function workerStates(
  ctx: QueryCtx,
  online: ReadonlyArray<Id<"workers">>,
  total: number,
  limits: ReadonlyMap<Id<"workers">, number>,
): Promise<{ workers: WorkerStates; slots: SlotStates; perWorker: Map<Id<"workers">, SlotStates> }> {
  const workers: WorkerStates = { idle: 0, busy: 0, suspended: 0, paused: 0, offline: Math.max(0, total - online.length) };
  const slots: SlotStates = { free: 0, busy: 0 };
  // each told-apart worker's own slots (a lane's capacity is its capable workers' slots)
  const perWorker = new Map<Id<"workers">, SlotStates>();
  for (const workerId of online.slice(0, STATES_READ)) {
    const row = await ctx.db
      .query("workerSlots")
      .withIndex("by_worker", (q) => q.eq("workerId", workerId))
      .unique();
    const running = row?.running ?? 0;
    const declared = row?.declared ?? limits.get(workerId);
    slots.busy += running;
    if (running > 0 && row?.suspended) workers.suspended++;
    else if (running > 0) workers.busy++;
    else if (declared === 0) workers.paused++;
    else workers.idle++;
    const free = !row?.suspended && declared !== undefined ? Math.max(0, declared - running) : 0;
    slots.free += free;
    perWorker.set(workerId, { free, busy: running });
  }
  workers.idle += Math.max(0, online.length - STATES_READ);
  return { workers, slots, perWorker };
}
