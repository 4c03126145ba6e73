import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { errorOf, resultOf } from "../core/bodies";
import { outputPerInstance, validationView } from "../trust/entry";
import { LIMITS } from "../core/limits";
import { explainWait, type WaitContext } from "./waitReasons";

/** What a submitter sees of a job, with its streamed output joined in order (the latest chunks if long). */
export async function jobView(ctx: QueryCtx, job: Doc<"jobs">) {
  const newestFirst = await ctx.db
    .query("jobOutput")
    .withIndex("by_job_seq", (q) => q.eq("jobId", job._id))
    .order("desc")
    .take(LIMITS.outputChunksReturned + 1);
  const outputTruncated = newestFirst.length > LIMITS.outputChunksReturned;
  const chunks = newestFirst.slice(0, LIMITS.outputChunksReturned).reverse();
  return {
    ...(await jobListView(ctx, job)),
    output: chunks.map((c) => c.chunk).join(""),
    outputTruncated,
    validation: await validationView(ctx, job),
    // a replicated job's output, one section per instance (worker) that wrote it
    ...(job.validation ? { outputs: await outputPerInstance(ctx, chunks) } : {}),
    // waiting or pending beyond its turn: why, as a stable code and a sentence (queue/waitReasons.ts)
    ...(await waitFields(ctx, job)),
  };
}

/** `waitCode` and `waitReason`, both null when nothing but its turn holds the job. */
export async function waitFields(ctx: QueryCtx, job: Doc<"jobs">, farm?: WaitContext) {
  const why = await explainWait(ctx, job, farm);
  return { waitCode: why?.code ?? null, waitReason: why?.reason ?? null };
}

async function clientKeyName(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | null> {
  return job.clientKeyId ? ((await ctx.db.get(job.clientKeyId))?.name ?? null) : null;
}

/** The job view without its output (a page of `jobs:list`). */
export async function jobListView(ctx: QueryCtx, job: Doc<"jobs">) {
  return {
    jobId: job._id,
    type: job.type,
    // an app job's pinned version (name, version, sha256, limits)
    ...(job.app ? { app: job.app } : {}),
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    requiredCapabilities: job.requiredCapabilities,
    requirements: job.requirements,
    progress: job.progress,
    statusText: job.statusText,
    result: await resultOf(ctx, job),
    error: await errorOf(ctx, job),
    // why it ended, as a stable code (dependency_failed, inputs_too_large), and the parent that failed it
    errorCode: job.errorCode,
    failedParent: job.failedParent,
    // its parents as submitted, and while waiting how many have not yet succeeded
    dependsOn: job.dependsOn,
    unmetParents: job.unmetParents,
    cancelRequested: job.cancelRequested === true,
    externalId: job.externalId,
    batchId: job.batchId,
    // a cache hit: the job whose result it took (it never ran); a job waiting on an identical one in flight
    cachedFrom: job.cachedFrom,
    cacheWaitsOn: job.cacheWaitsOn,
    // whose share and limits it counts against: its client key (by name; none for a host app's own submitJob) and
    // its fairness key inside it
    clientKey: await clientKeyName(ctx, job),
    fairnessKey: job.fairnessKey,
    createdAt: job._creationTime,
    availableAt: job.availableAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    // running but frozen on its worker since then (the donor is using the machine)
    suspendedSince: job.suspendedSince,
  };
}
