import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import type { MachineFacts } from "./facts";
import { LIMITS } from "../core/limits";
import { classKey, meetsClass, type RequirementClass } from "./requirements";

/**
 * The routing key of a capability set: sorted, de-duplicated, comma-joined ("" = runs anywhere), then, for jobs
 * that need a class of machine, "|" and the class ("|mem>=8192,gpu:nvidia>=16384"; no capability holds a "|").
 */
export function routingKey(sortedCapabilities: string[], requirements?: RequirementClass): string {
  const caps = sortedCapabilities.join(",");
  return requirements ? `${caps}|${classKey(requirements)}` : caps;
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
