import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { deadIfModuleGone } from "./appJobs";
import { effectiveCapabilities } from "./auth";
import { payloadOf } from "./bodies";
import { checkpointOf } from "./checkpoints";
import { leaseJob, leaseReplica, readyHeads, type Leased } from "./claim";
import { bumpLane, type ClaimNote } from "./counters";
import { setWants } from "./demand";
import { clearResync, inboxRows, isOfferedTo, takeOffer } from "./inbox";
import { kickForJobs, kickSummary, noteWaiter } from "./kick";
import { eligibleLanes } from "./lanes";
import { LIMITS } from "./limits";
import { touchWorker } from "./presence";
import { jsonBytes } from "./validate";
import { mayRun } from "./validation";

/**
 * What one claim may still hand out: checkpoint text (LIMITS.claimCheckpointChars) and bodies, payloads and
 * checkpoints together (LIMITS.claimBodyBytes); `full` once a job did not fit.
 */
export type ClaimBudget = { checkpointChars: number; bodyBytes: number; full: boolean };

export function newClaimBudget(): ClaimBudget {
  return { checkpointChars: LIMITS.claimCheckpointChars, bodyBytes: LIMITS.claimBodyBytes, full: false };
}

/**
 * The job's payload and checkpoint (none when it has none) if they fit what is left of the claim's budget,
 * which they then spend; null when they do not fit: the claim takes no more jobs, and this one stays where
 * it is. The payload is read only once it is known to fit (its size is on the job row).
 */
async function bodiesWithin(ctx: MutationCtx, job: Doc<"jobs">, budget: ClaimBudget): Promise<{ payload: unknown; checkpoint?: string } | null> {
  const checkpoint = await checkpointOf(ctx, job);
  const checkpointChars = checkpoint?.length ?? 0;
  const bytes = checkpointChars + (job.payloadBytes ?? jsonBytes(job.payload ?? null));
  if (checkpointChars > budget.checkpointChars || bytes > budget.bodyBytes) {
    budget.full = true;
    return null;
  }
  budget.checkpointChars -= checkpointChars;
  budget.bodyBytes -= bytes;
  const payload = await payloadOf(ctx, job);
  return checkpoint === undefined ? { payload } : { payload, checkpoint };
}

/**
 * The offers made to this worker, best first, at most `wanted` of them. Only as many are read as it takes:
 * the range read ends at the last one taken, so the dispatcher adding a later offer for this worker
 * meanwhile does not conflict with the claim. `complete`: every offer it holds was read. An offer whose
 * bodies do not fit the budget stays in the inbox (and the rest after it) for the next claim.
 */
export async function takeOffers(ctx: MutationCtx, worker: Doc<"workers">, wanted: number, now: number, budget: ClaimBudget, claims?: ClaimNote[]) {
  const offers = wanted > 0 ? await inboxRows(ctx, worker._id, "offer", wanted) : [];
  const claimed: Leased[] = [];
  for (const offer of offers) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (!isOfferedTo(job, worker._id)) continue;
    // dead-lettering withdraws the offer and gives the worker's slot back to its waiting line
    if (await deadIfModuleGone(ctx, job, worker._id)) continue;
    const fits = await bodiesWithin(ctx, job, budget);
    if (!fits) break;
    await takeOffer(ctx, offer);
    const { leased, stillReady } = await leaseOne(ctx, job, worker, now, fits, claims);
    claimed.push(leased);
    // offered, it counted as running; a replicated job's instance now counts instead, and the job counts as
    // pending if it stays ready for more instances
    if (job.validation) await bumpLane(ctx, job, { running: -1, pending: stillReady ? 1 : 0 });
    if (stillReady) await kickForJobs(ctx, worker.orgId);
  }
  return { claimed, complete: offers.length < wanted };
}

/**
 * Up to `count` ready jobs straight from the heads of the lanes this worker can serve, in strict order;
 * what it still wants after that is recorded as waiting (it has just read every head it can serve).
 * A claim that reads the heads is a worker declaring itself: an engine's start, or a simple caller. Heads
 * past one whose bodies do not fit the budget stay ready; the worker waits for them like for any job.
 */
export async function claimFromHeads(
  ctx: MutationCtx,
  worker: Doc<"workers">,
  advertised: string[],
  count: number,
  now: number,
  budget: ClaimBudget,
  claims?: ClaimNote[],
): Promise<Leased[]> {
  await touchWorker(ctx, worker);
  const capabilities = effectiveCapabilities(worker.allowedCapabilities, advertised);
  const lanes = await eligibleLanes(ctx, worker.orgId, capabilities, worker.facts);
  const heads = await readyHeads(ctx, lanes, count, (job) => mayRun(job, worker));
  const claimed: Leased[] = [];
  const perLane = new Map<Id<"lanes">, { job: Doc<"jobs">; count: number }>();
  let replicasLeftReady = false;
  for (const job of heads) {
    if (await deadIfModuleGone(ctx, job, worker._id)) continue;
    const fits = await bodiesWithin(ctx, job, budget);
    if (!fits) break;
    const { leased, stillReady } = await leaseOne(ctx, job, worker, now, fits, claims);
    claimed.push(leased);
    // a replicated job that wants more instances stays ready (and pending in the counts): the dispatcher offers it on;
    // one that runs all it wants counts nothing itself (its instances count as running)
    if (stillReady) replicasLeftReady = true;
    else if (job.validation) await bumpLane(ctx, job, { pending: -1 });
    else perLane.set(job.laneId, { job, count: (perLane.get(job.laneId)?.count ?? 0) + 1 });
  }
  // one counter change per lane, however many of its jobs were claimed
  for (const { job, count: n } of perLane.values()) await bumpLane(ctx, job, { pending: -n, running: n });
  if (claimed.length > 0) await kickSummary(ctx, worker.orgId);
  const stillWanted = count - claimed.length;
  await setWants(ctx, worker, stillWanted, [...capabilities].sort());
  if (stillWanted > 0) await noteWaiter(ctx, worker.orgId);
  // heads left for the budget are ready now: the dispatcher offers them (to this worker or another)
  if (budget.full || replicasLeftReady) await kickForJobs(ctx, worker.orgId);
  await clearResync(ctx, worker._id);
  return claimed;
}

/** Lease a job to this worker, or start one instance of it when it is replicated (which may leave it ready). */
async function leaseOne(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  now: number,
  fits: { payload: unknown; checkpoint?: string },
  claims?: ClaimNote[],
): Promise<{ leased: Leased; stillReady: boolean }> {
  if (job.validation) return await leaseReplica(ctx, job, worker, now, fits, claims);
  return { leased: await leaseJob(ctx, job, worker._id, now, fits, claims), stillReady: false };
}
