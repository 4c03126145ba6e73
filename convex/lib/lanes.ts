import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { createLaneShards } from "./counters";
import { fail } from "./errors";
import { LIMITS } from "./limits";

/** The routing key of a capability set: sorted, de-duplicated, comma-joined ("" = runs anywhere). */
export function routingKey(sortedCapabilities: string[]): string {
  return sortedCapabilities.join(",");
}

export async function laneFor(ctx: MutationCtx, orgId: Id<"orgs">, sortedCapabilities: string[]) {
  const key = routingKey(sortedCapabilities);
  const lane = await ctx.db
    .query("lanes")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId).eq("routingKey", key))
    .unique();
  if (lane) return lane;
  const existing = await orgLanes(ctx, orgId);
  if (existing.length >= LIMITS.lanesPerOrg) {
    fail("invalid_argument", `This org already has ${LIMITS.lanesPerOrg} distinct capability sets (lanes)`);
  }
  const laneId = await ctx.db.insert("lanes", { orgId, routingKey: key, capabilities: sortedCapabilities });
  await createLaneShards(ctx, orgId, laneId);
  return (await ctx.db.get(laneId))!;
}

export async function orgLanes(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"lanes">[]> {
  return await ctx.db
    .query("lanes")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId))
    .take(LIMITS.lanesPerOrg);
}

/** Lanes whose required capabilities are all within the worker's effective capabilities. */
export async function eligibleLanes(ctx: QueryCtx, orgId: Id<"orgs">, capabilities: Set<string>) {
  const lanes = await orgLanes(ctx, orgId);
  return lanes.filter((lane) => lane.capabilities.every((c) => capabilities.has(c)));
}
