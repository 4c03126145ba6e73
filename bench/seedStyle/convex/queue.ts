import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
import type { MutationCtx } from "./_generated/server";

/** Seed-style queue: a global work flag, claim = the first pending job this worker can run. */

async function setFlag(ctx: MutationCtx, hasWork: boolean) {
  const flag = await ctx.db.query("flags").first();
  if (!flag) await ctx.db.insert("flags", { hasWork });
  else if (flag.hasWork !== hasWork) await ctx.db.patch(flag._id, { hasWork });
}

export const submit = mutation({
  args: { type: v.string(), requiredCapabilities: v.array(v.string()) },
  handler: async (ctx, args) => {
    const jobId = await ctx.db.insert("jobs", { ...args, status: "pending" });
    await setFlag(ctx, true);
    return jobId;
  },
});

/** Every worker watches the one flag, whatever it can run. */
export const watch = query({
  args: {},
  handler: async (ctx) => (await ctx.db.query("flags").first())?.hasWork ?? false,
});

export const claim = mutation({
  args: { workerName: v.string(), capabilities: v.array(v.string()) },
  handler: async (ctx, { workerName, capabilities }) => {
    const flag = await ctx.db.query("flags").first();
    if (!flag?.hasWork) return null;
    const can = new Set(capabilities);
    // capabilities are filtered in code: every pending job ahead of a runnable one is read
    for await (const job of ctx.db.query("jobs").withIndex("by_status", (q) => q.eq("status", "pending"))) {
      if (!job.requiredCapabilities.every((c) => can.has(c))) continue;
      await ctx.db.patch(job._id, { status: "running", workerName });
      const more = await ctx.db
        .query("jobs")
        .withIndex("by_status", (q) => q.eq("status", "pending"))
        .first();
      if (!more) await setFlag(ctx, false);
      return job._id;
    }
    return null;
  },
});

export const complete = mutation({
  args: { jobId: v.id("jobs") },
  handler: async (ctx, { jobId }) => {
    await ctx.db.patch(jobId, { status: "done" });
  },
});

/** Fill the queue for a benchmark in one call (the seed design had no batch submit; this only inserts). */
export const submitBatch = mutation({
  args: { jobs: v.array(v.object({ type: v.string(), requiredCapabilities: v.array(v.string()) })) },
  handler: async (ctx, { jobs }) => {
    for (const job of jobs) await ctx.db.insert("jobs", { ...job, status: "pending" });
    if (jobs.length > 0) await setFlag(ctx, true);
  },
});
