import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { fail } from "../core/errors";
import { instanceOfLease } from "../trust/entry";
import { jobIdOfLease } from "../access/entry";

/** The job a lease names, read by the id in the lease (or, for leases made before that, by the lease). */
async function jobOfLease(ctx: QueryCtx, leaseId: string): Promise<Doc<"jobs"> | null> {
  if (leaseId.length === 0 || leaseId.length > 128) fail("stale_lease", "Malformed lease id");
  const named = jobIdOfLease(leaseId);
  const id = named === null ? null : ctx.db.normalizeId("jobs", named);
  return id
    ? await ctx.db.get(id)
    : await ctx.db
        .query("jobs")
        .withIndex("by_lease", (q) => q.eq("leaseId", leaseId))
        .unique();
}

function stale(): never {
  fail("stale_lease", "This lease is no longer held by this worker (expired, released, finished or foreign)");
}

/** The running job this worker holds under this lease id; anything else (an instance's lease included) is stale. */
export async function leasedJob(ctx: QueryCtx, worker: Doc<"workers">, leaseId: string): Promise<Doc<"jobs">> {
  return heldJob(await jobOfLease(ctx, leaseId), worker, leaseId);
}

function heldJob(job: Doc<"jobs"> | null, worker: Doc<"workers">, leaseId: string): Doc<"jobs"> {
  if (!job || job.leaseId !== leaseId || job.status !== "running" || job.workerId !== worker._id) stale();
  return job;
}

export type LeasedWork = { job: Doc<"jobs">; instance: Doc<"jobInstances"> | null };

/**
 * What this worker runs under this lease: a job, or an instance of a replicated job (whose leases are the
 * instances'). `canceled`: an instance canceled meanwhile (at quorum, or with its job) is still answered until
 * its worker has reported, so a heartbeat can say cancel and a fail can bring its CPU time.
 */
export async function leasedWork(ctx: QueryCtx, worker: Doc<"workers">, leaseId: string, options: { canceled?: boolean } = {}): Promise<LeasedWork> {
  const job = await jobOfLease(ctx, leaseId);
  if (!job?.validation) return { job: heldJob(job, worker, leaseId), instance: null };
  const instance = await instanceOfLease(ctx, leaseId);
  const held =
    instance !== null &&
    instance.jobId === job._id &&
    instance.workerId === worker._id &&
    (instance.status === "running" || (options.canceled === true && instance.status === "canceled" && !instance.reported));
  if (!held) stale();
  return { job, instance };
}
