import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { moduleGoneError } from "../apps/entry";
import { effectiveCapabilities } from "../access/entry";
import { payloadOf } from "../core/bodies";
import { checkpointOf } from "./checkpoints";
import { leaseJob, leaseReplica, REPLICA_SKIPS, type Leased } from "./claim";
import { bumpLane, type ClaimNote, setWants, waiterOf, clearResync, inboxRows, isOfferedTo, takeOffer, withdrawOffer, kickForJobs, kickForWaiter, kickSummary, noteWaiter, eligibleLanes, touchWorker } from "../lanes/entry";
import { FairRound } from "./fairRound";
import { downloadSizes, fitsBytes } from "./downloadBytes";
import { LIMITS } from "../core/limits";
import { jsonBytes } from "../core/validate";
import { mayRun } from "../trust/entry";
import { finishJob } from "./transitions";

/**
 * What one claim may still hand out: checkpoint text (LIMITS.claimCheckpointChars) and bodies, payloads and
 * checkpoints together (LIMITS.claimBodyBytes); `full` once a job did not fit. `downloadBytes`: what the worker may
 * still download (its `maxBytes`, a metered connection's allowance), all its jobs together; undefined: no limit.
 */
export type ClaimBudget = { checkpointChars: number; bodyBytes: number; full: boolean; downloadBytes?: number };

export function newClaimBudget(maxBytes?: number): ClaimBudget {
  return { checkpointChars: LIMITS.claimCheckpointChars, bodyBytes: LIMITS.claimBodyBytes, full: false, ...(maxBytes === undefined ? {} : { downloadBytes: maxBytes }) };
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
  const size = downloadSizes(ctx);
  let tooBig = 0;
  for (const offer of offers) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (!isOfferedTo(job, worker._id)) continue;
    // dead-lettering withdraws the offer and gives the worker's slot back to its waiting line
    if (await deadIfModuleGone(ctx, job, worker._id)) continue;
    const bytes = budget.downloadBytes === undefined ? 0 : await size(job);
    if (!fitsBytes(budget.downloadBytes, bytes)) {
      // the worker spent its allowance since it was offered this one (an app's module): another worker takes it
      await withdrawOffer(ctx, job, { requeue: true });
      tooBig++;
      continue;
    }
    const fits = await bodiesWithin(ctx, job, budget);
    if (!fits) break;
    if (budget.downloadBytes !== undefined) budget.downloadBytes -= bytes;
    await takeOffer(ctx, offer);
    const { leased, stillReady } = await leaseOne(ctx, job, worker, now, fits, claims);
    claimed.push(leased);
    // offered, it counted as running; a replicated job's instance now counts instead, and the job counts as
    // pending if it stays ready for more instances
    if (job.validation) await bumpLane(ctx, job, { running: -1, pending: stillReady ? 1 : 0 }, { moved: true });
    if (stillReady) await kickForJobs(ctx, worker.orgId);
  }
  if (tooBig > 0) {
    // the slots those offers held are wanted again, for jobs that fit what is left
    await setWants(ctx, worker, ((await waiterOf(ctx, worker._id))?.wants ?? 0) + tooBig, undefined, budget.downloadBytes);
    await kickForJobs(ctx, worker.orgId);
    await kickForWaiter(ctx, worker.orgId);
  }
  return { claimed, complete: offers.length < wanted };
}

/**
 * Up to `count` ready jobs straight from the heads of the lanes this worker can serve, in the dispatcher's order
 * (priority, then fair share between client keys and fairness keys, FIFO inside one: queue/fairRound.ts, whose
 * passes move for these jobs as for offered ones; a key at its maxRunning is held back); what it still wants
 * after that is recorded as waiting (it has just read every head it can serve). A claim that reads the heads is
 * a worker declaring itself: an engine's start, or a simple caller. Heads past one whose bodies do not fit the
 * budget stay ready; the worker waits for them like for any job.
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
  const round = await FairRound.open(ctx, worker.orgId, lanes, now);
  const size = downloadSizes(ctx);
  const claimed: Leased[] = [];
  const perLane = new Map<string, { job: Doc<"jobs">; count: number }>();
  let replicasLeftReady = false;
  let skips = 0;
  while (claimed.length < count) {
    const flow = await round.next();
    if (flow === null) break;
    const job = flow.head!;
    // an instance of a replicated job this worker already ran: the flow's next job is looked at
    if (!mayRun(job, worker)) {
      if (++skips > REPLICA_SKIPS) break;
      await round.skip(flow);
      continue;
    }
    // a head the worker may not download now (its allowance) is read past like one it may not run
    if (budget.downloadBytes !== undefined && (await size(job)) > budget.downloadBytes) {
      if (++skips > REPLICA_SKIPS) break;
      await round.skip(flow);
      continue;
    }
    if (await deadIfModuleGone(ctx, job, worker._id)) {
      await round.skip(flow);
      continue;
    }
    const fits = await bodiesWithin(ctx, job, budget);
    if (!fits) break;
    if (budget.downloadBytes !== undefined) budget.downloadBytes -= await size(job);
    const { leased, stillReady } = await leaseOne(ctx, job, worker, now, fits, claims);
    await round.took(flow);
    claimed.push(leased);
    // a replicated job that wants more instances stays ready (and pending in the counts): the dispatcher offers it on;
    // one that runs all it wants counts nothing itself (its instances count as running)
    if (stillReady) replicasLeftReady = true;
    else if (job.validation) await bumpLane(ctx, job, { pending: -1 });
    else {
      const tally = `${job.laneId}|${job.clientKeyId ?? ""}|${job.keyCounted === true}`;
      perLane.set(tally, { job, count: (perLane.get(tally)?.count ?? 0) + 1 });
    }
  }
  await round.save();
  // one counter change per lane and client key, however many of their jobs were claimed
  for (const { job, count: n } of perLane.values()) await bumpLane(ctx, job, { pending: -n, running: n });
  if (claimed.length > 0) await kickSummary(ctx, worker.orgId);
  const stillWanted = count - claimed.length;
  const bytesLeft = budget.downloadBytes === undefined ? null : Math.max(0, budget.downloadBytes - (await heldOfferBytes(ctx, worker, size)));
  await setWants(ctx, worker, stillWanted, [...capabilities].sort(), bytesLeft);
  if (stillWanted > 0) await noteWaiter(ctx, worker.orgId);
  // heads left for the budget or held back for their key's limit are ready now: the dispatcher offers them (to this
  // worker or another, once the key has room)
  if (budget.full || replicasLeftReady || round.limited) await kickForJobs(ctx, worker.orgId);
  await clearResync(ctx, worker._id);
  return claimed;
}

/** What the offers this worker still holds will download (they were counted when they were made). */
async function heldOfferBytes(ctx: MutationCtx, worker: Doc<"workers">, size: (job: Doc<"jobs">) => Promise<number>): Promise<number> {
  let bytes = 0;
  for (const offer of await inboxRows(ctx, worker._id, "offer")) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (isOfferedTo(job, worker._id)) bytes += await size(job);
  }
  return bytes;
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

/** A job whose app module is gone goes to the dead letters instead of to the worker. Returns true when it did. */
async function deadIfModuleGone(ctx: MutationCtx, job: Doc<"jobs">, workerId: Doc<"workers">["_id"]): Promise<boolean> {
  const error = await moduleGoneError(ctx, job);
  if (error === null) return false;
  await finishJob(ctx, job, "dead", { error, workerId });
  return true;
}
