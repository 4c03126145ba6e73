import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { weekCreditDays } from "../trust/entry";
import { laneTotals, orgTotals, recentThroughput, orgLanes } from "../lanes/entry";
import { keyCounts, waitPercentiles, workerStates, type SlotStates } from "../observability/entry";
import { listDeadLetters } from "./deadLetters";
import { LIMITS } from "../core/limits";
import { workerRoster } from "./roster";

export type Summary = Omit<Doc<"summaries">, "_id" | "_creationTime">;
type LaneSlots = { free: number; busy: number; workers: number };

/**
 * What farm:overview shows for an org, from the counter totals, the workers and their presence, the minute
 * buckets and the newest dead letters: O(lanes + workers) documents, never the queue. Only the summariser
 * runs it, after folding the counter deltas (and overview, for an org that has no summary yet).
 */
export async function computeSummary(ctx: QueryCtx, orgId: Id<"orgs">, now: number): Promise<Summary> {
  const lanes = await orgLanes(ctx, orgId);
  const perLane = await laneTotals(ctx, orgId, lanes.length);
  const finished = await orgTotals(ctx, orgId);
  // Every worker counted, the first ones listed (online first), per-worker detail left in the worker rows.
  const roster = await workerRoster(ctx, orgId, now, lanes);
  const dead = await listDeadLetters(ctx, orgId, LIMITS.summaryDeadLetters);
  const minutes = await recentThroughput(ctx, orgId, now);
  const queueWait = waitPercentiles(minutes.map((m) => m.waits));
  const limits = new Map(roster.listed.map(({ worker }) => [worker._id, worker.maxConcurrentJobs]));
  const states = await workerStates(ctx, roster.online, roster.counts.total, limits);
  const laneRows = lanes.map((lane) => ({
    routingKey: lane.routingKey,
    capabilities: lane.capabilities,
    pending: perLane.get(lane._id)?.pending ?? 0,
    running: perLane.get(lane._id)?.running ?? 0,
    ...(lane.requirements ? { requirements: lane.requirements } : {}),
    ...(lane.apps ? { apps: lane.apps } : {}),
    ...(lane.moreApps ? { moreApps: lane.moreApps } : {}),
    ...(roster.servable.has(lane._id) ? { servable: roster.servable.get(lane._id) } : {}),
    ...(roster.nobodyHandles.has(lane._id) ? { nobodyHandles: roster.nobodyHandles.get(lane._id) } : {}),
    ...(roster.machines.has(lane._id) ? { onlineMachines: roster.machines.get(lane._id) } : {}),
    ...laneSlots(roster.capable.get(lane._id), states.perWorker),
  }));
  // Waiting jobs no worker of the org could ever run: none of the (unrevoked) workers' reported machines meets them.
  const unmeetable = lanes.flatMap((lane, i) => {
    const row = laneRows[i];
    return row.requirements && row.pending > 0 && roster.unmet.has(lane._id)
      ? [{ routingKey: row.routingKey, requirements: row.requirements, pending: row.pending }]
      : [];
  });
  const credit = await weekCreditDays(ctx, orgId, now);
  return {
    orgId,
    refreshedAt: now,
    counts: {
      pending: laneRows.reduce((s, l) => s + l.pending, 0),
      running: laneRows.reduce((s, l) => s + l.running, 0),
      ...finished,
    },
    lanes: laneRows,
    workers: roster.listed.map(({ worker: w, lastSeenAt, stoppedAt }) => ({
      workerId: w._id,
      name: w.name,
      machineId: w.machineId,
      keyPrefix: w.keyPrefix,
      maxConcurrentJobs: w.maxConcurrentJobs,
      lastSeenAt,
      revoked: w.revoked,
      ...(stoppedAt === undefined ? {} : { stoppedAt }),
    })),
    workerCounts: roster.counts,
    workerStates: states.workers,
    slotStates: states.slots,
    creditDays: credit.days,
    ...(credit.complete ? {} : { creditDaysComplete: false }),
    throughput: minutes.filter((m) => m.finished > 0 || m.failed > 0).map(({ minuteStart, finished, failed }) => ({ minuteStart, finished, failed })),
    ...(queueWait ? { queueWait } : {}),
    clientKeys: await keyCounts(ctx, orgId, minutes),
    unmeetable,
    ...(roster.largest ? { largestMachine: roster.largest } : {}),
    deadLetters: dead.map((d) => ({ ...d, error: d.error?.slice(0, LIMITS.summaryErrorChars) })),
  };
}

/** Does the summary's worker list hold every worker (or was it written before workers were counted)? */
export function listsEveryWorker(summary: Pick<Summary, "workers" | "workerCounts">): boolean {
  return !summary.workerCounts || summary.workerCounts.total <= summary.workers.length;
}

export async function summaryOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"summaries"> | null> {
  return await ctx.db
    .query("summaries")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .unique();
}

/** The slots of a lane's capable online workers, when each of them was told apart (else nothing: not known). */
function laneSlots(capable: ReadonlyArray<Id<"workers">> | undefined, perWorker: ReadonlyMap<Id<"workers">, SlotStates>): { capableSlots?: LaneSlots } {
  if (capable === undefined) return {};
  const slots: LaneSlots = { free: 0, busy: 0, workers: capable.length };
  for (const id of capable) {
    const own = perWorker.get(id);
    if (!own) return {};
    slots.free += own.free;
    slots.busy += own.busy;
  }
  return { capableSlots: slots };
}
