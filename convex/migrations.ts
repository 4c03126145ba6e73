import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import { moveBodies } from "./lib/bodies";

/**
 * Data migrations, hand-rolled: each runs in bounded batches and reschedules itself until it is through.
 * (The @convex-dev/migrations component would do the bookkeeping, but a component needs `convex codegen`
 * against a deployment, which this repo's offline build cannot run.) Start one with
 * `npx convex run migrations:<name> '{}'`; running it again is harmless.
 */

/** Old rows are read (and their bodies written again beside them) up to this many bytes per batch. */
const MOVE_BYTES_PER_BATCH = 2 * 1024 * 1024;
const MOVE_JOBS_PER_BATCH = 100;

/**
 * Move the bodies of jobs written before bodies lived beside them (payload, result, a long error) into
 * `jobBodies`. Until it is through, every reader falls back to the job's own fields (lib/bodies.ts).
 */
export const moveJobBodies = internalMutation({
  args: { cursor: v.optional(v.string()) },
  handler: async (ctx, { cursor }) => {
    const page = await ctx.db
      .query("jobs")
      .paginate({ cursor: cursor ?? null, numItems: MOVE_JOBS_PER_BATCH, maximumBytesRead: MOVE_BYTES_PER_BATCH });
    let moved = 0;
    for (const job of page.page) if (await moveBodies(ctx, job)) moved++;
    if (!page.isDone) await ctx.scheduler.runAfter(0, internal.migrations.moveJobBodies, { cursor: page.continueCursor });
    return { scanned: page.page.length, moved, done: page.isDone };
  },
});
