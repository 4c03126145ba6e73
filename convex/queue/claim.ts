import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import type { AppPin } from "../apps/entry";
import { type ClaimNote, recordEvent, type JobRequirements } from "../lanes/entry";
import { startInstance } from "../trust/entry";
import { newLeaseId } from "../access/entry";
import { moveOf } from "../observability/entry";

/** How many ready jobs a claim or a dispatch round reads past because this worker already ran an instance of them. */
export const REPLICA_SKIPS = 64;

export type Leased = {
  jobId: Id<"jobs">;
  leaseId: string;
  type: string;
  payload: unknown;
  attempt: number;
  leaseMs: number;
  leaseExpiresAt: number;
  /** What the job needs of the machine (the engine checks free memory before it starts it). */
  requirements?: JobRequirements;
  /** An app job's pinned version: what the worker runs. */
  app?: AppPin;
  /** The latest checkpoint an earlier run of this job saved (base64): where this run resumes. */
  checkpoint?: string;
  /** The W3C trace context the job was submitted with: the worker's span of this run is its child. */
  traceparent?: string;
};

/**
 * Start one attempt of a pending job on this worker: a fresh lease, its one lazy lease check, a claimed
 * event. Counters are the caller's business (an offered job is already counted as running in its lane;
 * the worker's running count moves once per claim). `claims` collects the job's queue wait (claim time −
 * ready time) and its move, which the claim counts once for all its jobs (counters.ts noteClaims). `bodies`: the
 * job's payload and latest checkpoint, read by the caller (claimWork.ts), which bounds how much one claim hands out.
 */
export async function leaseJob(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  workerId: Id<"workers">,
  now: number,
  bodies: { payload: unknown; checkpoint?: string },
  claims?: ClaimNote[],
): Promise<Leased> {
  const leaseId = newLeaseId(job._id);
  const attempt = job.attempt + 1;
  const leaseExpiresAt = now + job.leaseMs;
  const leaseCheck = await ctx.scheduler.runAt(leaseExpiresAt, internal.janitor.checkLease, { jobId: job._id, leaseId });
  await ctx.db.patch(job._id, {
    status: "running",
    queue: undefined,
    offerExpiresAt: undefined,
    attempt,
    leaseId,
    leaseExpiresAt,
    leaseCheck,
    workerId,
    startedAt: now,
    progress: undefined,
    statusText: undefined,
  });
  await recordEvent(ctx, { ...job, attempt }, "claimed", { workerId });
  const waitMs = Math.max(0, now - job.availableAt);
  claims?.push({ waitMs, moves: moveOf(job, "running", { waitMs }), clientKeyId: job.clientKeyId });
  return leasedOf(job, leaseId, attempt, leaseExpiresAt, bodies);
}

function leasedOf(job: Doc<"jobs">, leaseId: string, attempt: number, leaseExpiresAt: number, bodies: { payload: unknown; checkpoint?: string }): Leased {
  const leased: Leased = { jobId: job._id, leaseId, type: job.type, payload: bodies.payload, attempt, leaseMs: job.leaseMs, leaseExpiresAt };
  if (job.requirements) leased.requirements = job.requirements;
  if (job.app) leased.app = job.app;
  if (bodies.checkpoint !== undefined) leased.checkpoint = bodies.checkpoint;
  if (job.traceparent !== undefined) leased.traceparent = job.traceparent;
  return leased;
}

/**
 * Start one instance of a replicated job on this worker (trust/instances.ts): the lease is the instance's. The job
 * holds no lease: it stays ready (`stillReady`: not offered, counted pending) while it wants more instances than
 * run, and runs once they all do; the caller moves the lane counters accordingly.
 */
export async function leaseReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  now: number,
  bodies: { payload: unknown; checkpoint?: string },
  claims?: ClaimNote[],
): Promise<{ leased: Leased; stillReady: boolean }> {
  const leaseId = newLeaseId(job._id);
  const { rules, more } = await startInstance(ctx, job, worker, leaseId, now);
  const stillReady = more > 0;
  await ctx.db.patch(job._id, {
    validation: rules,
    status: stillReady ? "pending" : "running",
    queue: stillReady ? "ready" : undefined,
    offerExpiresAt: undefined,
    workerId: undefined,
    startedAt: job.startedAt ?? now,
  });
  const attempt = job.attempt + 1;
  await recordEvent(ctx, { ...job, attempt }, "claimed", { workerId: worker._id, detail: `instance ${rules.started}` });
  const waitMs = Math.max(0, now - job.availableAt);
  claims?.push({ waitMs, moves: moveOf(job, stillReady ? "pending" : "running", { waitMs }), clientKeyId: job.clientKeyId });
  return { leased: leasedOf(job, leaseId, attempt, now + job.leaseMs, bodies), stillReady };
}
