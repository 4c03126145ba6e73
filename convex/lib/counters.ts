import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { LANE_SHARDS, ORG_SHARDS, THROUGHPUT_SHARDS } from "./limits";

export type FinishedStatus = "succeeded" | "canceled" | "dead";

function randomShard(shards: number): number {
  return Math.floor(Math.random() * shards);
}

export async function createOrgShards(ctx: MutationCtx, orgId: Id<"orgs">) {
  for (let shard = 0; shard < ORG_SHARDS; shard++) {
    await ctx.db.insert("orgShards", { orgId, shard, succeeded: 0, canceled: 0, dead: 0 });
  }
}

export async function createLaneShards(ctx: MutationCtx, orgId: Id<"orgs">, laneId: Id<"lanes">) {
  for (let shard = 0; shard < LANE_SHARDS; shard++) {
    await ctx.db.insert("laneShards", { orgId, laneId, shard, pending: 0, running: 0 });
  }
}

/** Add to one random shard of a lane's pending/running counts. */
export async function bumpLane(
  ctx: MutationCtx,
  job: Pick<Doc<"jobs">, "orgId" | "laneId">,
  delta: { pending?: number; running?: number },
) {
  const shard = randomShard(LANE_SHARDS);
  const row = await ctx.db
    .query("laneShards")
    .withIndex("by_lane_shard", (q) => q.eq("laneId", job.laneId).eq("shard", shard))
    .unique();
  const pending = delta.pending ?? 0;
  const running = delta.running ?? 0;
  if (row) {
    await ctx.db.patch(row._id, { pending: row.pending + pending, running: row.running + running });
  } else {
    await ctx.db.insert("laneShards", { orgId: job.orgId, laneId: job.laneId, shard, pending, running });
  }
}

/** Count a finished status (org shard) and, for a new finish, the minute's throughput bucket. */
export async function bumpFinished(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  status: FinishedStatus,
  delta: number,
  now?: number,
) {
  const shard = randomShard(ORG_SHARDS);
  const row = await ctx.db
    .query("orgShards")
    .withIndex("by_org_shard", (q) => q.eq("orgId", orgId).eq("shard", shard))
    .unique();
  if (row) {
    await ctx.db.patch(row._id, { [status]: row[status] + delta });
  } else {
    await ctx.db.insert("orgShards", { orgId, shard, succeeded: 0, canceled: 0, dead: 0, [status]: delta });
  }
  if (now !== undefined && delta > 0) await bumpThroughput(ctx, orgId, now);
}

async function bumpThroughput(ctx: MutationCtx, orgId: Id<"orgs">, now: number, field: "finished" | "failed" = "finished") {
  const minute = Math.floor(now / 60_000);
  const shard = randomShard(THROUGHPUT_SHARDS);
  const row = await ctx.db
    .query("throughput")
    .withIndex("by_org_minute_shard", (q) => q.eq("orgId", orgId).eq("minute", minute).eq("shard", shard))
    .unique();
  if (row) await ctx.db.patch(row._id, { [field]: (row[field] ?? 0) + 1 });
  else await ctx.db.insert("throughput", { orgId, minute, shard, finished: 0, failed: 0, [field]: 1 });
}

/** Count one failed attempt (a fail call or an expired lease) in the minute's throughput bucket. */
export async function bumpFailed(ctx: MutationCtx, orgId: Id<"orgs">, now: number) {
  await bumpThroughput(ctx, orgId, now, "failed");
}

export async function orgTotals(ctx: QueryCtx, orgId: Id<"orgs">) {
  const totals = { succeeded: 0, canceled: 0, dead: 0 };
  const rows = await ctx.db
    .query("orgShards")
    .withIndex("by_org_shard", (q) => q.eq("orgId", orgId))
    .take(ORG_SHARDS * 2);
  for (const row of rows) {
    totals.succeeded += row.succeeded;
    totals.canceled += row.canceled;
    totals.dead += row.dead;
  }
  return totals;
}

/** Pending/running per lane, summed over shards (reads lanes × LANE_SHARDS documents). */
export async function laneTotals(ctx: QueryCtx, orgId: Id<"orgs">, maxLanes: number) {
  const rows = await ctx.db
    .query("laneShards")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .take(maxLanes * LANE_SHARDS * 2);
  const byLane = new Map<Id<"lanes">, { pending: number; running: number }>();
  for (const row of rows) {
    const t = byLane.get(row.laneId) ?? { pending: 0, running: 0 };
    t.pending += row.pending;
    t.running += row.running;
    byLane.set(row.laneId, t);
  }
  return byLane;
}

/** Jobs finished and attempts failed per minute over the last hour (sparse: empty minutes are omitted). */
export async function recentThroughput(ctx: QueryCtx, orgId: Id<"orgs">, now: number) {
  const current = Math.floor(now / 60_000);
  const rows = await ctx.db
    .query("throughput")
    .withIndex("by_org_minute_shard", (q) => q.eq("orgId", orgId).gt("minute", current - 60))
    .take(60 * THROUGHPUT_SHARDS + THROUGHPUT_SHARDS);
  const byMinute = new Map<number, { finished: number; failed: number }>();
  for (const row of rows) {
    const sum = byMinute.get(row.minute) ?? { finished: 0, failed: 0 };
    sum.finished += row.finished;
    sum.failed += row.failed ?? 0;
    byMinute.set(row.minute, sum);
  }
  return [...byMinute]
    .filter(([, sum]) => sum.finished > 0 || sum.failed > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([minute, sum]) => ({ minuteStart: minute * 60_000, ...sum }));
}
