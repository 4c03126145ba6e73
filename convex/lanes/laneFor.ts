import { internal } from "../_generated/api";
import type { Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { createLaneShards } from "./counters";
import { backfillLane } from "./demand";
import { fail } from "../core/errors";
import { orgLanes, routingKey } from "./lanes";
import { LIMITS } from "../core/limits";
import type { RequirementClass } from "./requirements";
import { noteLaneApp } from "./laneApps";

/**
 * The lane of a capability set, made when missing (a maintenance pass deletes lanes that hold nothing, so a
 * retried job may recreate its own). A new lane learns at once about the oldest workers already waiting
 * that can serve it; a scheduled pass adds the rest.
 */
export async function laneFor(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  sortedCapabilities: string[],
  requirements?: RequirementClass,
  app?: { name: string; version: number },
) {
  const key = routingKey(sortedCapabilities, requirements);
  const lane = await ctx.db
    .query("lanes")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId).eq("routingKey", key))
    .unique();
  // an app job's lane names its app (a write only for an app it has not named yet)
  if (lane) return await noteLaneApp(ctx, lane, app);
  const existing = await orgLanes(ctx, orgId);
  if (existing.length >= LIMITS.lanesPerOrg) {
    fail("invalid_argument", `This org already has ${LIMITS.lanesPerOrg} distinct capability sets (lanes)`);
  }
  const laneId = await ctx.db.insert("lanes", {
    orgId,
    routingKey: key,
    capabilities: sortedCapabilities,
    ...(requirements ? { requirements } : {}),
    ...(app ? { apps: [{ name: app.name, version: app.version }] } : {}),
  });
  await createLaneShards(ctx, orgId, laneId);
  const created = (await ctx.db.get(laneId))!;
  const next = await backfillLane(ctx, created, null, LIMITS.laneBackfill);
  if (next !== null) await ctx.scheduler.runAfter(0, internal.dispatch.backfill, { laneId, after: next.since, afterCreation: next.creationTime });
  return created;
}
