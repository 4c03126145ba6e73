import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { effectiveCapabilities } from "./auth";
import { weekCreditDays } from "./credit";
import { laneTotals, orgTotals, recentThroughput } from "./counters";
import { listDeadLetters } from "./deadLetters";
import { orgLanes } from "./lanes";
import { waitPercentiles } from "./queueWait";
import { LIMITS } from "./limits";
import { meetsClass } from "./requirements";

export type Summary = Omit<Doc<"summaries">, "_id" | "_creationTime">;

/**
 * What farm:overview shows for an org, from the counter totals, the workers and their presence, the minute
 * buckets and the newest dead letters: O(lanes + workers) documents, never the queue. Only the summariser
 * runs it, after folding the counter deltas (and overview, for an org that has no summary yet).
 */
export async function computeSummary(ctx: QueryCtx, orgId: Id<"orgs">, now: number): Promise<Summary> {
  const lanes = await orgLanes(ctx, orgId);
  const perLane = await laneTotals(ctx, orgId, lanes.length);
  const finished = await orgTotals(ctx, orgId);
  const laneRows = lanes.map((lane) => ({
    routingKey: lane.routingKey,
    capabilities: lane.capabilities,
    pending: perLane.get(lane._id)?.pending ?? 0,
    running: perLane.get(lane._id)?.running ?? 0,
    ...(lane.requirements ? { requirements: lane.requirements } : {}),
  }));
  const workers = await ctx.db
    .query("workers")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .take(LIMITS.workersListed);
  const seen = await ctx.db
    .query("presence")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .take(LIMITS.workersListed * 2);
  const lastSeen = new Map(seen.map((p) => [p.workerId, p.lastSeenAt]));
  const stopped = new Map(seen.flatMap((p) => (p.stoppedAt === undefined ? [] : [[p.workerId, p.stoppedAt] as const])));
  // What each worker declared it can run (its waiting-line row); one that never declared: what it enrolled with.
  const declared = await ctx.db
    .query("waiters")
    .withIndex("by_org_since", (q) => q.eq("orgId", orgId))
    .take(LIMITS.workersListed * 2);
  const declaredCapabilities = new Map(declared.map((w) => [w.workerId, w.capabilities]));
  const dead = await listDeadLetters(ctx, orgId, LIMITS.summaryDeadLetters);
  const minutes = await recentThroughput(ctx, orgId, now);
  const queueWait = waitPercentiles(minutes.map((m) => m.waits));
  // Waiting jobs no worker of the org could ever run: none of the (unrevoked) workers' reported machines meets them.
  const machines = workers.filter((w) => !w.revoked).map((w) => w.facts);
  const unmeetable = laneRows.flatMap((lane) =>
    lane.requirements && lane.pending > 0 && !machines.some((facts) => meetsClass(facts, lane.requirements))
      ? [{ routingKey: lane.routingKey, requirements: lane.requirements, pending: lane.pending }]
      : [],
  );
  return {
    orgId,
    refreshedAt: now,
    counts: {
      pending: laneRows.reduce((s, l) => s + l.pending, 0),
      running: laneRows.reduce((s, l) => s + l.running, 0),
      ...finished,
    },
    lanes: laneRows,
    workers: workers.map((w) => ({
      workerId: w._id,
      name: w.name,
      machineId: w.machineId,
      keyPrefix: w.keyPrefix,
      maxConcurrentJobs: w.maxConcurrentJobs,
      lastSeenAt: lastSeen.get(w._id) ?? w.lastSeenAt ?? w._creationTime,
      revoked: w.revoked,
      capabilities: declaredCapabilities.get(w._id) ?? [...effectiveCapabilities(w.allowedCapabilities, w.advertisedCapabilities)].sort(),
      ...(w.facts ? { facts: w.facts } : {}),
      ...(stopped.has(w._id) ? { stoppedAt: stopped.get(w._id) } : {}),
    })),
    creditDays: await weekCreditDays(ctx, orgId, now),
    throughput: minutes.filter((m) => m.finished > 0 || m.failed > 0).map(({ minuteStart, finished, failed }) => ({ minuteStart, finished, failed })),
    ...(queueWait ? { queueWait } : {}),
    unmeetable,
    deadLetters: dead.map((d) => ({ ...d, error: d.error?.slice(0, LIMITS.summaryErrorChars) })),
  };
}

export async function summaryOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"summaries"> | null> {
  return await ctx.db
    .query("summaries")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .unique();
}
