import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import { purgeJob } from "./lib/deadLetters";
import { TIMING } from "./lib/limits";

const JOBS_PER_BATCH = 10;
const BUCKETS_PER_BATCH = 200;

/** Retention age: args, else the FARMHAND_RETENTION_MS environment variable, else 7 days. */
function retentionMs(olderThanMs?: number): number {
  if (olderThanMs !== undefined) return olderThanMs;
  const fromEnv = Number(process.env.FARMHAND_RETENTION_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : TIMING.defaultRetentionMs;
}

/**
 * Delete finished jobs (with their output and events) older than the retention age, and throughput
 * buckets older than two hours, a bounded batch per transaction; reschedules itself while work remains.
 */
export const sweep = internalMutation({
  args: { olderThanMs: v.optional(v.number()) },
  handler: async (ctx, { olderThanMs }) => {
    const age = retentionMs(olderThanMs);
    const cutoff = Date.now() - age;
    const jobs = await ctx.db
      .query("jobs")
      .withIndex("by_finished", (q) => q.gte("finishedAt", 0).lt("finishedAt", cutoff))
      .take(JOBS_PER_BATCH);
    let more = jobs.length === JOBS_PER_BATCH;
    for (const job of jobs) {
      if (!(await purgeJob(ctx, job))) {
        more = true;
        break;
      }
    }
    const oldMinute = Math.floor((Date.now() - 2 * 60 * 60_000) / 60_000);
    const buckets = await ctx.db
      .query("throughput")
      .withIndex("by_minute", (q) => q.lt("minute", oldMinute))
      .take(BUCKETS_PER_BATCH);
    for (const bucket of buckets) await ctx.db.delete(bucket._id);
    if (buckets.length === BUCKETS_PER_BATCH) more = true;
    if (more) await ctx.scheduler.runAfter(0, internal.retention.sweep, { olderThanMs: age });
    return { deletedJobs: jobs.length, deletedBuckets: buckets.length, more };
  },
});
