import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { fail } from "./errors";
import { jobIdOfLease } from "./keys";

/** The running job this worker holds under this lease id; anything else is a stale or foreign lease. */
export async function leasedJob(ctx: QueryCtx, worker: Doc<"workers">, leaseId: string): Promise<Doc<"jobs">> {
  if (leaseId.length === 0 || leaseId.length > 128) fail("stale_lease", "Malformed lease id");
  const named = jobIdOfLease(leaseId);
  const id = named === null ? null : ctx.db.normalizeId("jobs", named);
  const job = id
    ? await ctx.db.get(id)
    : // a lease made before lease ids named their job
      await ctx.db
        .query("jobs")
        .withIndex("by_lease", (q) => q.eq("leaseId", leaseId))
        .unique();
  if (!job || job.leaseId !== leaseId || job.status !== "running" || job.workerId !== worker._id) {
    fail("stale_lease", "This lease is no longer held by this worker (expired, released, finished or foreign)");
  }
  return job;
}
