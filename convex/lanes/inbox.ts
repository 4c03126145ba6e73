import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { bumpLane } from "./counters";
import { countDownWants, setWants, waiterOf } from "./demand";
import { kickForWaiter } from "./kick";
import { LIMITS, TIMING } from "../core/limits";
import { cancelIfPending } from "./scheduled";
import { addRunning } from "./workerSlots";

/**
 * A worker's inbox (its doorbell): offers, cancel notices, a resync notice. The rows a worker's one
 * subscription reads; nothing a heartbeat writes lives here.
 */

/** This worker's inbox rows of one kind (offers best first), at most `limit`. */
export async function inboxRows(ctx: QueryCtx, workerId: Id<"workers">, kind: Doc<"inbox">["kind"], limit: number = LIMITS.inboxRows) {
  return await ctx.db
    .query("inbox")
    .withIndex("by_worker_kind", (q) => q.eq("workerId", workerId).eq("kind", kind))
    .take(limit);
}

async function inboxRowForJob(ctx: QueryCtx, jobId: Id<"jobs">, kind: Doc<"inbox">["kind"]) {
  const rows = await ctx.db
    .query("inbox")
    .withIndex("by_job", (q) => q.eq("jobId", jobId))
    .take(4);
  return rows.find((r) => r.kind === kind) ?? null;
}

/**
 * The dispatcher hands a ready job to a waiting worker: offered until the TTL, counted as running. `bytes`: what the
 * worker downloads to run it, counted against what it may still download when it has a limit.
 */
export async function offerJob(ctx: MutationCtx, job: Doc<"jobs">, waiter: Doc<"waiters">, now: number, bytes: number): Promise<void> {
  const expiresAt = now + TIMING.offerTtlMs;
  await ctx.db.patch(job._id, { queue: "offered", workerId: waiter.workerId, offerExpiresAt: expiresAt });
  const expiryCheck = await ctx.scheduler.runAt(expiresAt, internal.dispatch.offerExpired, { jobId: job._id, workerId: waiter.workerId });
  await ctx.db.insert("inbox", {
    orgId: job.orgId,
    workerId: waiter.workerId,
    kind: "offer",
    jobId: job._id,
    negPriority: job.negPriority,
    availableAt: job.availableAt,
    expiresAt,
    expiryCheck,
  });
  await countDownWants(ctx, waiter, bytes);
}

/** Is this job currently offered to this worker? */
export function isOfferedTo(job: Doc<"jobs"> | null, workerId: Id<"workers">): job is Doc<"jobs"> {
  return job !== null && job.status === "pending" && job.queue === "offered" && job.workerId === workerId;
}

/** The worker took its offer: drop the inbox row and the expiry check (a cancel is a write, not a run). */
export async function takeOffer(ctx: MutationCtx, offer: Doc<"inbox">): Promise<void> {
  if (offer.expiryCheck) await cancelIfPending(ctx, offer.expiryCheck);
  await ctx.db.delete(offer._id);
}

/**
 * An offered job goes back to the ready queue (declined, canceled, revoked, expired): the inbox row and
 * its expiry check go, and the counters move it back from running to pending unless it is leaving the
 * queue altogether (`requeue: false`). `fromExpiryCheck`: the expiry check itself is running (not canceled).
 */
export async function withdrawOffer(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  options: { requeue: boolean; fromExpiryCheck?: boolean },
): Promise<void> {
  const offer = await inboxRowForJob(ctx, job._id, "offer");
  if (offer) {
    if (offer.expiryCheck && !options.fromExpiryCheck) await cancelIfPending(ctx, offer.expiryCheck);
    await ctx.db.delete(offer._id);
  }
  if (!options.requeue) return;
  await ctx.db.patch(job._id, { queue: "ready", workerId: undefined, offerExpiresAt: undefined });
  await bumpLane(ctx, job, { running: -1, pending: 1, offerExpiries: options.fromExpiryCheck ? 1 : undefined });
}

/** A withdrawn offer (canceled job) frees the slot it had reserved: the worker wants one more again. */
export async function giveBackWant(ctx: MutationCtx, worker: Doc<"workers"> | null): Promise<void> {
  if (!worker || worker.revoked) return;
  const waiter = await waiterOf(ctx, worker._id);
  if (!waiter) return;
  await setWants(ctx, worker, waiter.wants + 1);
  await kickForWaiter(ctx, worker.orgId);
}

/** Tell a running job's worker, through its doorbell, that the job was canceled. */
export async function noticeCancel(ctx: MutationCtx, job: Doc<"jobs">): Promise<void> {
  if (!job.workerId || (await inboxRowForJob(ctx, job._id, "cancel"))) return;
  await ctx.db.insert("inbox", { orgId: job.orgId, workerId: job.workerId, kind: "cancel", jobId: job._id });
}

/**
 * A running job stops running (finished, released, retried, expired): drop its cancel notice and its
 * pending lease check, unless that check is what is running now.
 */
export async function leaveRunning(ctx: MutationCtx, job: Doc<"jobs">, options: { fromLeaseCheck?: boolean } = {}): Promise<void> {
  if (job.leaseCheck && !options.fromLeaseCheck) await cancelIfPending(ctx, job.leaseCheck);
  if (job.workerId) await addRunning(ctx, job.orgId, job.workerId, -1);
  if (job.cancelRequested) {
    const notice = await inboxRowForJob(ctx, job._id, "cancel");
    if (notice) await ctx.db.delete(notice._id);
  }
}

/** After an offer to it expired, a worker is out of every waiting line: its doorbell says so. */
export async function noticeResync(ctx: MutationCtx, orgId: Id<"orgs">, workerId: Id<"workers">): Promise<void> {
  if ((await inboxRows(ctx, workerId, "resync")).length > 0) return;
  await ctx.db.insert("inbox", { orgId, workerId, kind: "resync" });
}

/** The worker declared itself again: the resync notice has done its job. */
export async function clearResync(ctx: MutationCtx, workerId: Id<"workers">): Promise<void> {
  for (const row of await inboxRows(ctx, workerId, "resync")) await ctx.db.delete(row._id);
}
