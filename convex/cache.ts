import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc } from "./_generated/dataModel";
import type { Id } from "./_generated/dataModel";
import { internalMutation, type MutationCtx } from "./_generated/server";
import { TX_BUDGET } from "./core/budget";
import { finishFromCache } from "./queue/cacheHits";
import { bumpLane } from "./lanes/counters";
import { recordEvent } from "./lanes/events";
import { kickForJobs } from "./lanes/kick";
import { laneFor } from "./lanes/laneFor";
import { moveOf } from "./observability/moves";
import { classOf } from "./lanes/requirements";
import { deleteEntry, entryResult, liveEntry } from "./queue/resultCache";
import { routingCapabilities } from "./lanes/routing";

/** Waiters settled per transaction at most (each a few writes; a hit also writes its copy of the result). */
const WAITERS_PER_PAGE = 100;

/**
 * One page of the jobs waiting on `sourceId` (single flight): each takes the cached result when the source's result
 * was stored and its entry is still there (an invalidated entry is not handed out), else it is queued to run itself.
 * The result is copied to each waiter, so a page holds as many as the write budget allows.
 */
export const releaseWaiters = internalMutation({
  args: { sourceId: v.id("jobs"), stored: v.boolean() },
  handler: async (ctx, { sourceId, stored }) => {
    const source = await ctx.db.get(sourceId);
    const entry = stored && source?.cache ? await liveEntry(ctx, source.orgId, source.cache.key, Date.now()) : null;
    const handOver = entry && entry.sourceJobId === sourceId ? entry : null;
    const result = handOver ? await entryResult(ctx, handOver._id) : undefined;
    const perWaiter = handOver ? Math.max(1, handOver.resultBytes) + 2_048 : 2_048;
    const size = Math.max(1, Math.min(WAITERS_PER_PAGE, Math.floor(TX_BUDGET.writeBytes / perWaiter)));
    const waiters = await ctx.db
      .query("jobs")
      .withIndex("by_cache_waits", (q) => q.eq("cacheWaitsOn", sourceId))
      .take(size);
    for (const waiter of waiters) {
      if (waiter.status !== "waiting") await ctx.db.patch(waiter._id, { cacheWaitsOn: undefined });
      else if (handOver) await finishFromCache(ctx, waiter._id, handOver, result);
      else await runItself(ctx, waiter);
    }
    if (waiters.length === size) await ctx.scheduler.runAfter(0, internal.cache.releaseWaiters, { sourceId, stored });
  },
});

/** The job it waited on ended without a result it may take: it is pending in its lane, to run itself. */
async function runItself(ctx: MutationCtx, job: Doc<"jobs">) {
  const lane = await laneFor(ctx, job.orgId, routingCapabilities(job.type, job.requiredCapabilities), classOf(job.requirements), job.app);
  const now = Date.now();
  await ctx.db.patch(job._id, { laneId: lane._id, status: "pending", queue: "ready", cacheWaitsOn: undefined, availableAt: Math.max(now, job.availableAt) });
  await bumpLane(ctx, { orgId: job.orgId, laneId: lane._id, clientKeyId: job.clientKeyId, keyCounted: job.keyCounted }, { pending: 1, jobs: moveOf(job, "pending") });
  await recordEvent(ctx, job, "released", { detail: `the identical job ${job.cacheWaitsOn} ended without a result to share: it runs itself` });
  await kickForJobs(ctx, job.orgId);
}

/** Entries dropped per transaction at most; each also deletes its result row (up to a result's cap). */
const ENTRIES_PER_PAGE = 50;

/** Drop a page of entries, within the write budget: whether more may follow. */
async function dropPage(ctx: MutationCtx, entries: AsyncIterable<Doc<"cacheEntries">>): Promise<{ dropped: number; more: boolean }> {
  let spent = 0;
  let dropped = 0;
  for await (const entry of entries) {
    if (dropped === ENTRIES_PER_PAGE || (dropped > 0 && spent + entry.resultBytes > TX_BUDGET.writeBytes)) return { dropped, more: true };
    spent += entry.resultBytes;
    await deleteEntry(ctx, entry);
    dropped++;
  }
  return { dropped, more: false };
}

/** One page of an org's entries (of one type, or all), rescheduling itself until none is left (consoleActions:invalidateCache). */
export async function invalidatePage(ctx: MutationCtx, orgId: Id<"orgs">, type: string | undefined): Promise<{ dropped: number; more: boolean }> {
  const entries =
    type === undefined
      ? ctx.db.query("cacheEntries").withIndex("by_org_key", (q) => q.eq("orgId", orgId))
      : ctx.db.query("cacheEntries").withIndex("by_org_type", (q) => q.eq("orgId", orgId).eq("type", type));
  const page = await dropPage(ctx, entries);
  if (page.more) await ctx.scheduler.runAfter(0, internal.cache.invalidate, { orgId, ...(type !== undefined ? { type } : {}) });
  return page;
}

export const invalidate = internalMutation({
  args: { orgId: v.id("orgs"), type: v.optional(v.string()) },
  handler: async (ctx, { orgId, type }) => await invalidatePage(ctx, orgId, type),
});

/** Retention of the cache: expired entries are deleted, a page per transaction, rescheduling while more are due. */
export const pruneExpired = internalMutation({
  args: {},
  handler: async (ctx) => {
    const page = await dropPage(ctx, ctx.db.query("cacheEntries").withIndex("by_expires", (q) => q.lt("expiresAt", Date.now())));
    if (page.more) await ctx.scheduler.runAfter(0, internal.cache.pruneExpired, {});
    return page;
  },
});
