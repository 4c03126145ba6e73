import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { errorFields, setBody } from "../core/bodies";
import { bumpFailed, bumpFinished, bumpLane, type FinishedStatus, recordEvent, type EventKind, giveBackWant, leaveRunning, withdrawOffer, kickForJobs, kickSummary } from "../lanes/entry";
import { jitteredBackoffMs } from "../core/backoff";
import { denyPendingCredit, cancelRunningInstances } from "../trust/entry";
import { TIMING } from "../core/limits";
import { moveOf, runMsOf } from "../observability/entry";
import { noteJobEnded } from "../webhooks/entry";
import { noteJobEnded as settleDependents } from "../pipelines/entry";
import { storeResult } from "./resultCache";
import { noteCacheableEnded } from "./cacheWaiters";

const FINISH_EVENT: Record<FinishedStatus, EventKind> = { succeeded: "done", canceled: "canceled", dead: "dead" };

const LEASE_CLEARED = {
  leaseId: undefined,
  leaseExpiresAt: undefined,
  leaseCheck: undefined,
  queue: undefined,
  suspendedSince: undefined,
} as const;

/**
 * Offered jobs are pending to their submitter but count as running in the lane counters (a slot is taken). A
 * running replicated job counts nothing itself: each of its running instances counts as running (trust/instances.ts).
 */
export function countedAs(job: Doc<"jobs">): "pending" | "running" | null {
  if (job.status === "running") return job.validation ? null : "running";
  return job.status === "pending" && job.queue === "offered" ? "running" : "pending";
}

type FinishExtra = {
  result?: unknown;
  error?: string;
  workerId?: Id<"workers">;
  detail?: string;
  fromLeaseCheck?: boolean;
  // why it ended, as a stable code (dependency_failed, inputs_too_large), and the parent that failed it
  code?: string;
  failedParent?: Id<"jobs">;
  // a settlement page (pipelines/settlements.ts) ended it: its own children are settled in their own scheduled pages
  cascaded?: boolean;
  // how many workers returned this result (a replicated job's agreeing instances; 1 otherwise): may it be cached
  agreeing?: number;
  // answered from the result cache (or an identical job in flight), not run
  cacheHit?: boolean;
};

/**
 * Move a waiting, pending or running job to a final status, keeping every counter, notice and timer in step.
 * The one place a job becomes final: its dependents (pipelines/dependencies.ts) hear of it here.
 */
export async function finishJob(ctx: MutationCtx, job: Doc<"jobs">, status: FinishedStatus, extra: FinishExtra = {}) {
  const now = Date.now();
  if (job.validation) {
    if (status !== "succeeded") await cancelRunningInstances(ctx, job, status === "canceled" ? "job canceled" : "job ended");
    if (status !== "succeeded") await denyPendingCredit(ctx, job, status === "canceled" ? "job canceled before its results were validated" : `job died before its results were validated: ${extra.error ?? "dead"}`);
  }
  if (job.status === "running") await leaveRunning(ctx, job, { fromLeaseCheck: extra.fromLeaseCheck });
  if (job.status === "pending" && job.queue === "offered") {
    await withdrawOffer(ctx, job, { requeue: false });
    await giveBackWant(ctx, job.workerId ? await ctx.db.get(job.workerId) : null);
  }
  // a waiting job is in no lane's counts
  const counted = job.status === "waiting" ? null : countedAs(job);
  // a run that returned its result tells the lane how long its jobs run (observability/runTimes.ts)
  const ran = status === "succeeded" && counted === "running" && job.startedAt !== undefined ? { runMs: now - job.startedAt } : {};
  if (counted) await bumpLane(ctx, job, { [counted]: -1, ...ran });
  const patch: Partial<Doc<"jobs">> = { status, finishedAt: now, offerExpiresAt: undefined, ...LEASE_CLEARED };
  if (job.unmetParents !== undefined) patch.unmetParents = undefined;
  if (extra.code !== undefined) patch.errorCode = extra.code;
  if (extra.failedParent !== undefined) patch.failedParent = extra.failedParent;
  if (extra.result !== undefined) patch.resultBytes = await setBody(ctx, job, "result", extra.result);
  if (extra.error !== undefined) Object.assign(patch, await errorFields(ctx, job, extra.error));
  await ctx.db.patch(job._id, patch);
  // a cancel-requested job whose worker never answered: its lease ran out (a failed attempt counts that itself)
  const expired = extra.fromLeaseCheck && status === "canceled" ? { leaseExpiries: 1 } : {};
  await bumpFinished(ctx, job.orgId, status, 1, now, { jobs: moveOf(job, status, runMsOf(job, now)), ...expired, ...(extra.cacheHit ? { cacheHits: 1 } : {}) });
  if (job.cache && job.cachedFrom === undefined) await noteCacheableEnded(ctx, job, status === "succeeded" && (await storeResult(ctx, job, extra.result, extra.agreeing ?? 1)));
  await recordEvent(ctx, job, FINISH_EVENT[status], { workerId: extra.workerId, detail: extra.detail ?? extra.error });
  await kickSummary(ctx, job.orgId);
  await noteJobEnded(ctx, job);
  await settleDependents(ctx, job, status, finishJob, patch.resultBytes, extra.cascaded);
}

/** Exponential backoff with jitter: base·2^(attempt−1), capped, then scaled by a random 50–100 %. */
function backoffMs(attempt: number): number {
  return jitteredBackoffMs(attempt - 1, TIMING.backoffBaseMs, TIMING.backoffMaxMs);
}

/** Put a running job back in its lane, on the same row: now (release) or after a backoff (retry). */
export async function requeue(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  how: { kind: "release"; detail?: string } | { kind: "retry"; error?: string },
  workerId?: Id<"workers">,
  options: { fromLeaseCheck?: boolean } = {},
) {
  await leaveRunning(ctx, job, options);
  await bumpLane(ctx, job, { running: -1, pending: 1, jobs: moveOf(job, "pending", runMsOf(job, Date.now())) });
  await kickSummary(ctx, job.orgId);
  if (how.kind === "release") {
    const attempt = Math.max(0, job.attempt - 1);
    await ctx.db.patch(job._id, { ...LEASE_CLEARED, status: "pending", queue: "ready", attempt, workerId: undefined });
    await recordEvent(ctx, { ...job, attempt }, "released", { workerId, detail: how.detail });
    await kickForJobs(ctx, job.orgId);
    return;
  }
  await delayForRetry(ctx, job, how.error, workerId, LEASE_CLEARED);
}

/**
 * The job waits the retry backoff of its attempts so far, delayed (pending, off the ready queue), and
 * janitor.promote readies it when the backoff has passed. `also`: more fields for the same patch. Lane counters are
 * the caller's.
 */
export async function delayForRetry(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  error: string | undefined,
  workerId: Id<"workers"> | undefined,
  also: Partial<Doc<"jobs">> = {},
) {
  const backoff = backoffMs(job.attempt);
  const availableAt = Date.now() + backoff;
  await ctx.db.patch(job._id, {
    ...also,
    status: "pending",
    queue: "delayed",
    availableAt,
    workerId: undefined,
    ...(error !== undefined ? await errorFields(ctx, job, error) : {}),
  });
  await recordEvent(ctx, job, "retried", { workerId, detail: error, backoffMs: backoff });
  await ctx.scheduler.runAt(availableAt, internal.janitor.promote, { jobId: job._id });
}

/** A failed attempt: retry with backoff while attempts remain, else dead; a cancel-requested job ends canceled. */
export async function failAttempt(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  error: string,
  retryable: boolean,
  workerId?: Id<"workers">,
) {
  if (job.cancelRequested) return await finishJob(ctx, job, "canceled", { error, workerId });
  const retries = retryable && job.attempt < job.maxAttempts;
  await bumpFailed(ctx, job.orgId, Date.now(), { retries: retries ? 1 : undefined });
  await recordEvent(ctx, job, "failed", { workerId, detail: error });
  if (retries) return await requeue(ctx, job, { kind: "retry", error }, workerId);
  await finishJob(ctx, job, "dead", { error, workerId });
}
