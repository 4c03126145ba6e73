import { vi } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { TIMING } from "../../convex/core/limits";
import type { Backend, Farm } from "./setup";

/** Helpers for the dispatcher tests: read the rows a transition wrote, run what came due. */

/**
 * Run the dispatcher and its follow-ups (due now, or after the short batching wait of a freed worker's kick),
 * nothing later (offer expiries, summaries, lease checks).
 */
export async function runDue(t: Backend, rounds = 4) {
  for (let i = 0; i < rounds; i++) {
    vi.advanceTimersByTime(TIMING.dispatchBatchDelayMs);
    await t.finishInProgressScheduledFunctions();
  }
}

/** Move fake time forward and let what came due finish. */
export async function advance(t: Backend, ms: number) {
  vi.advanceTimersByTime(ms);
  await t.finishInProgressScheduledFunctions();
  await runDue(t);
}

export async function jobRow(t: Backend, jobId: Id<"jobs">) {
  return (await t.run(async (ctx) => await ctx.db.get(jobId)))!;
}

export async function inboxOf(t: Backend, workerId: Id<"workers">) {
  return await t.run(async (ctx) =>
    (await ctx.db.query("inbox").collect()).filter((r) => r.workerId === workerId).map(({ kind, jobId, expiresAt, expiryCheck }) => ({ kind, jobId, expiresAt, expiryCheck })),
  );
}

export async function waiterRow(t: Backend, workerId: Id<"workers">) {
  return await t.run(async (ctx) => await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).unique());
}

export async function laneLinesOf(t: Backend, workerId: Id<"workers">) {
  return await t.run(async (ctx) => {
    const rows = await ctx.db.query("laneWaiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).collect();
    const keys = [];
    for (const row of rows) keys.push((await ctx.db.get(row.laneId))!.routingKey);
    return keys.sort();
  });
}

export async function dispatchState(farm: Farm) {
  const row = await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).unique());
  const { scheduled, readyJobs, waiters } = row!;
  return { scheduled, readyJobs, waiters };
}

/** Scheduled functions by name fragment and state ("pending", "canceled", "success", …). */
export async function scheduled(t: Backend, name: string, state?: string) {
  const rows = await t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect());
  return rows.filter((r) => r.name.includes(name) && (state === undefined || r.state.kind === state));
}

export async function eventKinds(t: Backend, jobId: Id<"jobs">) {
  return await t.run(async (ctx) => (await ctx.db.query("jobEvents").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect()).map((e) => e.kind));
}

/** Lane counters (totals plus changes not folded yet), per routing key. */
export async function laneCounts(farm: Farm) {
  return await farm.t.run(async (ctx) => {
    const out: Record<string, { pending: number; running: number }> = {};
    for (const lane of await ctx.db.query("lanes").collect()) {
      if (lane.orgId !== farm.orgId) continue;
      const shards = await ctx.db.query("laneShards").withIndex("by_lane_shard", (q) => q.eq("laneId", lane._id)).collect();
      const deltas = await ctx.db.query("counterDeltas").withIndex("by_lane", (q) => q.eq("laneId", lane._id)).collect();
      out[lane.routingKey] = {
        pending: shards.reduce((s, x) => s + x.pending, 0) + deltas.reduce((s, x) => s + (x.pending ?? 0), 0),
        running: shards.reduce((s, x) => s + x.running, 0) + deltas.reduce((s, x) => s + (x.running ?? 0), 0),
      };
    }
    return out;
  });
}
