import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { kickSummary } from "./kick";
import { LIMITS, TIMING } from "../core/limits";

export async function presenceOf(ctx: QueryCtx, workerId: Id<"workers">): Promise<Doc<"presence"> | null> {
  return await ctx.db
    .query("presence")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .unique();
}

/**
 * Mark the worker seen. Ordinary calls write at most once a minute (`always` for workers:presence), and
 * never the worker's own document: that one is read by every subscription its key authenticates.
 */
export async function touchWorker(ctx: MutationCtx, worker: Doc<"workers">, always = false): Promise<number> {
  const now = Date.now();
  const row = await presenceOf(ctx, worker._id);
  if (!row) {
    await ctx.db.insert("presence", { orgId: worker.orgId, workerId: worker._id, lastSeenAt: now });
    return now;
  }
  // A worker that said it stopped and calls again is back at once, not after the minute.
  if (always || row.stoppedAt !== undefined || now - row.lastSeenAt >= TIMING.lastSeenWriteEveryMs) {
    await ctx.db.patch(row._id, { lastSeenAt: now, stoppedAt: undefined });
    if (row.stoppedAt !== undefined) await kickSummary(ctx, worker.orgId);
    return now;
  }
  return row.lastSeenAt;
}

/** The worker said it stopped (its engine stopped cleanly): offline at once, last seen now. */
export async function markStopped(ctx: MutationCtx, worker: Doc<"workers">): Promise<void> {
  const now = Date.now();
  const row = await presenceOf(ctx, worker._id);
  if (row) await ctx.db.patch(row._id, { lastSeenAt: now, stoppedAt: now });
  else await ctx.db.insert("presence", { orgId: worker.orgId, workerId: worker._id, lastSeenAt: now, stoppedAt: now });
}

/** Online as of `at`: not revoked, not stopped since its last call, and that call within the online window. */
export function isOnline(w: { revoked: boolean; lastSeenAt: number; stoppedAt?: number }, at: number): boolean {
  return !w.revoked && w.stoppedAt === undefined && at - w.lastSeenAt <= TIMING.onlineWindowMs;
}

/** The newest call any worker of the org made (0 if none): a time that comes from the data, not the clock. */
export async function lastCallOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<number> {
  const rows = await ctx.db
    .query("presence")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .take(LIMITS.workersListed * 2);
  return rows.reduce((newest, r) => Math.max(newest, r.lastSeenAt), 0);
}
