import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { TIMING } from "./limits";

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
  if (always || now - row.lastSeenAt >= TIMING.lastSeenWriteEveryMs) {
    await ctx.db.patch(row._id, { lastSeenAt: now });
    return now;
  }
  return row.lastSeenAt;
}
