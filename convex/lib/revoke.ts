import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { stopWaiting } from "./demand";
import { inboxRows, isOfferedTo, withdrawOffer } from "./inbox";
import { kickForJobs, kickSummary } from "./kick";
import { LIMITS } from "./limits";
import { finishJob, requeue } from "./transitions";

/**
 * The worker's key stops working on its next call, and its jobs go back to the queue at once: running ones
 * without burning an attempt (a cancel-requested one ends canceled), offered ones to the next waiter. Its
 * row counts as offline from now on (a revoked worker is never online). Returns how many jobs went back.
 */
export async function revokeAndHandBack(ctx: MutationCtx, worker: Doc<"workers">, why: string): Promise<number> {
  const workerId = worker._id;
  await ctx.db.patch(workerId, { revoked: true });
  const running = await ctx.db
    .query("jobs")
    .withIndex("by_worker_status", (q) => q.eq("workerId", workerId).eq("status", "running"))
    .take(LIMITS.maxConcurrentJobs);
  for (const job of running) {
    if (job.cancelRequested) await finishJob(ctx, job, "canceled", { workerId, detail: `${why} after cancel` });
    else await requeue(ctx, job, { kind: "release", detail: why }, workerId);
  }
  let handedBack = running.length;
  for (const offer of await inboxRows(ctx, workerId, "offer")) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (isOfferedTo(job, workerId)) {
      await withdrawOffer(ctx, job, { requeue: true });
      handedBack++;
    }
  }
  for (const kind of ["cancel", "resync"] as const) {
    for (const row of await inboxRows(ctx, workerId, kind)) await ctx.db.delete(row._id);
  }
  await stopWaiting(ctx, workerId);
  if (handedBack > 0) await kickForJobs(ctx, worker.orgId);
  await kickSummary(ctx, worker.orgId);
  return handedBack;
}
