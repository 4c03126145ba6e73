import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import type { AppPin } from "./appJobs";
import type { ClaimNote } from "./counters";
import { recordEvent } from "./events";
import { startInstance } from "./instances";
import { newLeaseId } from "./keys";
import { moveOf } from "./metrics/moves";
import type { JobRequirements } from "./requirements";

/** Claim order: higher priority first, then the job that became ready first (FIFO, ties by insertion). */
export function compareJobs(a: Doc<"jobs">, b: Doc<"jobs">): number {
  return a.negPriority - b.negPriority || a.availableAt - b.availableAt || a._creationTime - b._creationTime;
}

/** How many ready jobs a claim or a dispatch round reads past because this worker already ran an instance of them. */
export const REPLICA_SKIPS = 64;

/** The first ready job of a lane (the range from the lane's start to it is what a claim or dispatch reads). */
export async function laneHead(ctx: QueryCtx, laneId: Id<"lanes">): Promise<Doc<"jobs"> | null> {
  return await ctx.db
    .query("jobs")
    .withIndex("by_lane_ready", (q) => q.eq("laneId", laneId).eq("queue", "ready"))
    .first();
}

/**
 * The best `count` ready jobs over these lanes, in strict claim order; `mayRun` passes over jobs this worker
 * may not run (an instance of a replicated job it already ran, a job bigger than it may download), read past at most
 * REPLICA_SKIPS times. It is asked once per job, in order, and a job it accepts is taken.
 */
export async function readyHeads(
  ctx: QueryCtx,
  lanes: Doc<"lanes">[],
  count: number,
  mayRun: (job: Doc<"jobs">) => boolean | Promise<boolean> = () => true,
): Promise<Doc<"jobs">[]> {
  if (count <= 0 || lanes.length === 0) return [];
  // A merge of the lanes' ready queues, each read only as far as it is taken from: at most one job per lane
  // more than are taken (not `count` per lane, which many lanes of big payloads could push past Convex's
  // per-transaction read limit), and a read set that ends where this claim stopped.
  const queues = lanes.map((lane) =>
    ctx.db
      .query("jobs")
      .withIndex("by_lane_ready", (q) => q.eq("laneId", lane._id).eq("queue", "ready"))
      [Symbol.asyncIterator](),
  );
  const fronts = await Promise.all(queues.map((queue) => queue.next()));
  const heads: Doc<"jobs">[] = [];
  let skips = 0;
  while (heads.length < count) {
    let best = -1;
    fronts.forEach((front, i) => {
      if (!front.done && (best < 0 || compareJobs(front.value, (fronts[best] as IteratorYieldResult<Doc<"jobs">>).value) < 0)) best = i;
    });
    if (best < 0) break;
    const job = (fronts[best] as IteratorYieldResult<Doc<"jobs">>).value;
    if (!(await mayRun(job))) {
      if (++skips > REPLICA_SKIPS) break;
      fronts[best] = await queues[best].next();
      continue;
    }
    heads.push(job);
    if (heads.length < count) fronts[best] = await queues[best].next();
  }
  return heads;
}

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
  claims?.push({ waitMs, moves: moveOf(job, "running", { waitMs }) });
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
 * Start one instance of a replicated job on this worker (lib/instances.ts): the lease is the instance's. The job
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
  claims?.push({ waitMs, moves: moveOf(job, stillReady ? "pending" : "running", { waitMs }) });
  return { leased: leasedOf(job, leaseId, attempt, now + job.leaseMs, bodies), stillReady };
}
