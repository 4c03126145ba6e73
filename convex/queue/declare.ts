import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { setWants, giveBackWant, inboxRows, isOfferedTo, withdrawOffer, kickForJobs, kickForWaiter, kickSummary, classOf, meetsClass, noteSlotState, runningCount } from "../lanes/entry";
import { downloadSizes, fitsBytes } from "./downloadBytes";

/**
 * The worker says how many jobs it runs at once right now (`slots`, its concurrency; 0 = take nothing more) and,
 * on a metered connection, what its jobs may still download (`maxBytes`; undefined: no limit).
 * It then wants offered: min(slots, the server's limit) − its running jobs − the offers it already holds.
 * Offers beyond that (it lowered its slots, paused or is stopping), or beyond what it may download, go back to the
 * queue at once. Does not read any lane head; wakes the dispatcher only if work may be waiting. Returns how many
 * jobs it now waits for.
 */
export async function declareSlots(
  ctx: MutationCtx,
  worker: Doc<"workers">,
  slots: number,
  capabilities?: string[],
  maxBytes?: number,
): Promise<number> {
  const declared = Math.min(slots, worker.maxConcurrentJobs);
  await noteSlotState(ctx, worker, { declared });
  const capacity = Math.max(0, declared - (await runningCount(ctx, worker)));
  const offers = await inboxRows(ctx, worker._id, "offer");
  const size = downloadSizes(ctx);
  let bytesLeft = maxBytes;
  let kept = 0;
  let declined = 0;
  // Offers are ordered best first: keep the best ones that fit, give back the rest.
  for (const offer of offers) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (!isOfferedTo(job, worker._id)) continue;
    const bytes = bytesLeft === undefined ? 0 : await size(job);
    if (kept < capacity && fitsBytes(bytesLeft, bytes)) {
      kept++;
      if (bytesLeft !== undefined) bytesLeft -= bytes;
      continue;
    }
    await withdrawOffer(ctx, job, { requeue: true });
    declined++;
  }
  if (declined > 0) {
    await kickForJobs(ctx, worker.orgId);
    await kickSummary(ctx, worker.orgId);
  }
  const wants = await setWants(ctx, worker, capacity - kept, capabilities, bytesLeft ?? null);
  if (wants > 0) await kickForWaiter(ctx, worker.orgId);
  return wants;
}

/**
 * The worker's machine changed (a GPU gone, less memory): the offers it holds for jobs it no longer meets go back
 * to the queue at once, for a machine that does, and the slots they held are wanted again. Returns how many.
 */
export async function withdrawUnmetOffers(ctx: MutationCtx, worker: Doc<"workers">): Promise<number> {
  const offers = await inboxRows(ctx, worker._id, "offer");
  let withdrawn = 0;
  for (const offer of offers) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (!isOfferedTo(job, worker._id) || meetsClass(worker.facts, classOf(job.requirements))) continue;
    await withdrawOffer(ctx, job, { requeue: true });
    await giveBackWant(ctx, worker);
    withdrawn++;
  }
  if (withdrawn > 0) {
    await kickForJobs(ctx, worker.orgId);
    await kickSummary(ctx, worker.orgId);
  }
  return withdrawn;
}
