import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { createLaneShards } from "./counters";
import { backfillLane } from "./demand";
import { fail } from "./errors";
import type { MachineFacts } from "./facts";
import { LIMITS } from "./limits";
import { classKey, meetsClass, type RequirementClass } from "./requirements";

/**
 * The routing key of a capability set: sorted, de-duplicated, comma-joined ("" = runs anywhere), then, for jobs
 * that need a class of machine, "|" and the class ("|mem>=8192,gpu:nvidia>=16384"; no capability holds a "|").
 */
export function routingKey(sortedCapabilities: string[], requirements?: RequirementClass): string {
  const caps = sortedCapabilities.join(",");
  return requirements ? `${caps}|${classKey(requirements)}` : caps;
}

/**
 * The lane of a capability set, made when missing (a maintenance pass deletes lanes that hold nothing, so a
 * retried job may recreate its own). A new lane learns at once about the oldest workers already waiting
 * that can serve it; a scheduled pass adds the rest.
 */
export async function laneFor(ctx: MutationCtx, orgId: Id<"orgs">, sortedCapabilities: string[], requirements?: RequirementClass) {
  const key = routingKey(sortedCapabilities, requirements);
  const lane = await ctx.db
    .query("lanes")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId).eq("routingKey", key))
    .unique();
  if (lane) return lane;
  const existing = await orgLanes(ctx, orgId);
  if (existing.length >= LIMITS.lanesPerOrg) {
    fail("invalid_argument", `This org already has ${LIMITS.lanesPerOrg} distinct capability sets (lanes)`);
  }
  const laneId = await ctx.db.insert("lanes", { orgId, routingKey: key, capabilities: sortedCapabilities, ...(requirements ? { requirements } : {}) });
  await createLaneShards(ctx, orgId, laneId);
  const created = (await ctx.db.get(laneId))!;
  const next = await backfillLane(ctx, created, 0, LIMITS.laneBackfill);
  if (next !== null) await ctx.scheduler.runAfter(0, internal.dispatch.backfill, { laneId, after: Math.max(next, 1) });
  return created;
}

export async function orgLanes(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"lanes">[]> {
  return await ctx.db
    .query("lanes")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId))
    .take(LIMITS.lanesPerOrg);
}

/** Whether a worker with these capabilities and facts can serve this lane. */
export function canServe(lane: Doc<"lanes">, capabilities: Set<string>, facts: MachineFacts | undefined): boolean {
  return lane.capabilities.every((c) => capabilities.has(c)) && meetsClass(facts, lane.requirements);
}

/** Lanes whose required capabilities are all within the worker's effective capabilities and whose class its facts meet. */
export async function eligibleLanes(ctx: QueryCtx, orgId: Id<"orgs">, capabilities: Set<string>, facts: MachineFacts | undefined) {
  const lanes = await orgLanes(ctx, orgId);
  return lanes.filter((lane) => canServe(lane, capabilities, facts));
}
