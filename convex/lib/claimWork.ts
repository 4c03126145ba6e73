import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { deadIfModuleGone } from "./appJobs";
import { effectiveCapabilities } from "./auth";
import { leaseJob, readyHeads, type Leased } from "./claim";
import { bumpLane } from "./counters";
import { setWants } from "./demand";
import { clearResync, inboxRows, isOfferedTo, takeOffer } from "./inbox";
import { kickSummary, noteWaiter } from "./kick";
import { eligibleLanes } from "./lanes";
import { touchWorker } from "./presence";

/**
 * The offers made to this worker, best first, at most `wanted` of them. Only as many are read as it takes:
 * the range read ends at the last one taken, so the dispatcher adding a later offer for this worker
 * meanwhile does not conflict with the claim. `complete`: every offer it holds was read.
 */
export async function takeOffers(ctx: MutationCtx, worker: Doc<"workers">, wanted: number, now: number, waits?: number[]) {
  const offers = wanted > 0 ? await inboxRows(ctx, worker._id, "offer", wanted) : [];
  const claimed: Leased[] = [];
  for (const offer of offers) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (!isOfferedTo(job, worker._id)) continue;
    // dead-lettering withdraws the offer and gives the worker's slot back to its waiting line
    if (await deadIfModuleGone(ctx, job, worker._id)) continue;
    await takeOffer(ctx, offer);
    claimed.push(await leaseJob(ctx, job, worker._id, now, waits));
  }
  return { claimed, complete: offers.length < wanted };
}

/**
 * Up to `count` ready jobs straight from the heads of the lanes this worker can serve, in strict order;
 * what it still wants after that is recorded as waiting (it has just read every head it can serve).
 * A claim that reads the heads is a worker declaring itself: an engine's start, or a simple caller.
 */
export async function claimFromHeads(
  ctx: MutationCtx,
  worker: Doc<"workers">,
  advertised: string[],
  count: number,
  now: number,
  waits?: number[],
): Promise<Leased[]> {
  await touchWorker(ctx, worker);
  const capabilities = effectiveCapabilities(worker.allowedCapabilities, advertised);
  const lanes = await eligibleLanes(ctx, worker.orgId, capabilities, worker.facts);
  const heads = await readyHeads(ctx, lanes, count);
  const claimed: Leased[] = [];
  const perLane = new Map<Id<"lanes">, { job: Doc<"jobs">; count: number }>();
  for (const job of heads) {
    if (await deadIfModuleGone(ctx, job, worker._id)) continue;
    claimed.push(await leaseJob(ctx, job, worker._id, now, waits));
    perLane.set(job.laneId, { job, count: (perLane.get(job.laneId)?.count ?? 0) + 1 });
  }
  // one counter change per lane, however many of its jobs were claimed
  for (const { job, count: n } of perLane.values()) await bumpLane(ctx, job, { pending: -n, running: n });
  if (claimed.length > 0) await kickSummary(ctx, worker.orgId);
  const stillWanted = count - claimed.length;
  await setWants(ctx, worker, stillWanted, [...capabilities].sort());
  if (stillWanted > 0) await noteWaiter(ctx, worker.orgId);
  await clearResync(ctx, worker._id);
  return claimed;
}
