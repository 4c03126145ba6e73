import type { Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";

/** A job's webhook delivery as the console's job page shows it, or null when it has none. */
export async function deliveriesOf(ctx: QueryCtx, jobId: Id<"jobs">) {
  const row = await ctx.db
    .query("webhookDeliveries")
    .withIndex("by_job", (q) => q.eq("jobId", jobId))
    .unique();
  return row ? { state: row.state, nextAt: row.nextAt, attempts: row.attempts } : null;
}
