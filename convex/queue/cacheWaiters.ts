import { internal } from "../_generated/api";
import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * A cacheable job that ran has ended: the identical jobs waiting on it (single flight) are settled in scheduled pages
 * (convex/cache.ts releaseWaiters), never in this transaction: a greedy key may have queued thousands of them.
 * `stored`: its result entered the cache, so they take it; otherwise they run themselves.
 */
export async function noteCacheableEnded(ctx: MutationCtx, job: Doc<"jobs">, stored: boolean): Promise<void> {
  const waiter = await ctx.db
    .query("jobs")
    .withIndex("by_cache_waits", (q) => q.eq("cacheWaitsOn", job._id))
    .first();
  if (waiter) await ctx.scheduler.runAfter(0, internal.cache.releaseWaiters, { sourceId: job._id, stored });
}
