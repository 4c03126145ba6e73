import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { effectiveCapabilities } from "../access/entry";
import { canServe, eligibleLanes } from "./lanes";
import { LIMITS } from "../core/limits";

/**
 * Waiting workers. A worker's `waiters` row says how many more jobs it wants offered now; while that is
 * above 0 it also has one `laneWaiters` row per lane it can serve, which is how the dispatcher finds the
 * oldest waiting worker of a lane with one index read. Only the worker's own calls and the dispatcher
 * (and the offer-expiry / revoke paths) write these rows.
 */

export async function waiterOf(ctx: QueryCtx, workerId: Id<"workers">): Promise<Doc<"waiters"> | null> {
  return await ctx.db
    .query("waiters")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .unique();
}

async function laneRowsOf(ctx: QueryCtx, workerId: Id<"workers">) {
  return await ctx.db
    .query("laneWaiters")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .take(LIMITS.lanesPerOrg + 1);
}

async function dropLaneRows(ctx: MutationCtx, workerId: Id<"workers">) {
  for (const row of await laneRowsOf(ctx, workerId)) await ctx.db.delete(row._id);
}

async function addLaneRows(ctx: MutationCtx, worker: Doc<"workers">, capabilities: string[], since: number) {
  const lanes = await eligibleLanes(ctx, worker.orgId, new Set(capabilities), worker.facts);
  for (const lane of lanes) {
    await ctx.db.insert("laneWaiters", { orgId: worker.orgId, laneId: lane._id, workerId: worker._id, since });
  }
}

/**
 * Set how many more jobs this worker wants offered. Going from 0 to more puts it at the back of every
 * lane it can serve; staying above 0 keeps its place (unless its capabilities changed); 0 takes it out.
 * `bytesLeft`: what its offers may still download (a metered connection); null: no limit; undefined: as it was.
 * Writes nothing when nothing changes. Returns the new count.
 */
export async function setWants(
  ctx: MutationCtx,
  worker: Doc<"workers">,
  wants: number,
  capabilities?: string[],
  bytesLeft?: number | null,
): Promise<number> {
  const row = await waiterOf(ctx, worker._id);
  if (row && bytesLeft !== undefined && row.bytesLeft !== (bytesLeft ?? undefined)) {
    await ctx.db.patch(row._id, { bytesLeft: bytesLeft ?? undefined });
  }
  // Never declared yet: what it advertised when it enrolled, as the server allows it.
  const caps = capabilities ?? row?.capabilities ?? [...effectiveCapabilities(worker.allowedCapabilities, worker.advertisedCapabilities)].sort();
  const sameCaps = row !== null && row.capabilities.join(",") === caps.join(",");
  if (wants <= 0) {
    if (row && row.since !== undefined) {
      await dropLaneRows(ctx, worker._id);
      await ctx.db.patch(row._id, { wants: 0, since: undefined, capabilities: caps });
    } else if (row && (!sameCaps || row.wants !== 0)) {
      await ctx.db.patch(row._id, { wants: 0, capabilities: caps });
    }
    return 0;
  }
  const now = Date.now();
  if (!row) {
    const bytes = bytesLeft === undefined || bytesLeft === null ? {} : { bytesLeft };
    await ctx.db.insert("waiters", { orgId: worker.orgId, workerId: worker._id, wants, since: now, capabilities: caps, ...bytes });
    await addLaneRows(ctx, worker, caps, now);
    return wants;
  }
  if (row.since === undefined || !sameCaps) {
    const since = row.since ?? now;
    if (row.since !== undefined) await dropLaneRows(ctx, worker._id);
    await ctx.db.patch(row._id, { wants, since, capabilities: caps });
    await addLaneRows(ctx, worker, caps, since);
    return wants;
  }
  if (row.wants !== wants) await ctx.db.patch(row._id, { wants });
  return wants;
}

/**
 * The worker's facts changed: while it waits, its place in the lanes it can serve now is redone (same `since`,
 * so it keeps its turn in the lanes it could already serve).
 */
export async function refreshLaneRows(ctx: MutationCtx, worker: Doc<"workers">): Promise<void> {
  const row = await waiterOf(ctx, worker._id);
  if (!row || row.since === undefined || row.wants <= 0) return;
  await dropLaneRows(ctx, worker._id);
  await addLaneRows(ctx, worker, row.capabilities, row.since);
}

/**
 * The dispatcher offered this worker one job (of `bytes` to download): one fewer wanted, and those bytes fewer left
 * when it has a limit; at 0 wanted it stops waiting.
 */
export async function countDownWants(ctx: MutationCtx, waiter: Doc<"waiters">, bytes: number): Promise<void> {
  const bytesLeft = waiter.bytesLeft === undefined ? {} : { bytesLeft: Math.max(0, waiter.bytesLeft - bytes) };
  if (waiter.wants <= 1) {
    await dropLaneRows(ctx, waiter.workerId);
    await ctx.db.patch(waiter._id, { wants: 0, since: undefined, ...bytesLeft });
  } else {
    await ctx.db.patch(waiter._id, { wants: waiter.wants - 1, ...bytesLeft });
  }
}

/** Take a worker out of every lane's waiting line (offer expired, revoked, paused). */
export async function stopWaiting(ctx: MutationCtx, workerId: Id<"workers">): Promise<void> {
  const row = await waiterOf(ctx, workerId);
  if (!row || (row.wants === 0 && row.since === undefined)) return;
  await dropLaneRows(ctx, workerId);
  await ctx.db.patch(row._id, { wants: 0, since: undefined });
}

/** Where a lane's backfill goes on: after this waiter (its `since`, then its creation time, the index's order). */
export type BackfillCursor = { since: number; creationTime: number };

/**
 * A new lane learns about workers already waiting that can serve it: the oldest `limit` waiting workers of the
 * org after `after` (from the first when null). Returns where to continue, or null when all were seen. The cursor
 * names a waiter exactly, so waiters that began waiting in the same millisecond are neither read twice nor skipped.
 */
export async function backfillLane(
  ctx: MutationCtx,
  lane: Doc<"lanes">,
  after: BackfillCursor | null,
  limit: number,
): Promise<BackfillCursor | null> {
  const sameMs = after
    ? await ctx.db
        .query("waiters")
        .withIndex("by_org_since", (q) => q.eq("orgId", lane.orgId).eq("since", after.since).gt("_creationTime", after.creationTime))
        .take(limit)
    : [];
  const later =
    sameMs.length < limit
      ? await ctx.db
          .query("waiters")
          .withIndex("by_org_since", (q) => (after ? q.eq("orgId", lane.orgId).gt("since", after.since) : q.eq("orgId", lane.orgId).gte("since", 0)))
          .take(limit - sameMs.length)
      : [];
  const waiting = [...sameMs, ...later];
  for (const waiter of waiting) {
    if (waiter.wants <= 0 || waiter.since === undefined) continue;
    // a lane for a class of machine needs the waiter's facts: one more read, only for such lanes
    const facts = lane.requirements ? (await ctx.db.get(waiter.workerId))?.facts : undefined;
    if (!canServe(lane, new Set(waiter.capabilities), facts)) continue;
    const existing = await ctx.db
      .query("laneWaiters")
      .withIndex("by_lane_since", (q) => q.eq("laneId", lane._id).eq("since", waiter.since!))
      .filter((q) => q.eq(q.field("workerId"), waiter.workerId))
      .first();
    if (!existing) {
      await ctx.db.insert("laneWaiters", { orgId: lane.orgId, laneId: lane._id, workerId: waiter.workerId, since: waiter.since });
    }
  }
  if (waiting.length < limit) return null;
  const last = waiting[waiting.length - 1];
  return { since: last.since!, creationTime: last._creationTime };
}

/**
 * What a worker says it runs now (on claim and ready) becomes its advertised set: it is what setWants falls back
 * to when a call declares no capabilities, and a handler added since enrollment (apps, a recipe) must count
 * there too. Writes only when the set changed.
 */
export async function noteAdvertised(ctx: MutationCtx, worker: Doc<"workers">, advertised: string[]): Promise<void> {
  const now = [...new Set(advertised)].sort();
  if (now.join(",") === [...worker.advertisedCapabilities].sort().join(",")) return;
  await ctx.db.patch(worker._id, { advertisedCapabilities: now });
}
