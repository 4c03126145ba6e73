import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { bumpFailed, bumpLane } from "./counters";
import { recordEvent } from "./events";
import { giveBackWant, withdrawOffer } from "./inbox";
import { cancelRunningInstances, completeInstance, settleReplica, stopInstance } from "./instances";
import { kickSummary } from "./kick";
import { moveOf } from "./metrics/moves";
import { delayForRetry, finishJob } from "./transitions";

/**
 * The instances of a replicated job end here (workers:complete, fail, release, the instance lease janitor, a
 * revoke). A result is judged with the others: the job succeeds with the agreed result (instances still running
 * are canceled at quorum), goes dead with `no_quorum`, or wants another instance elsewhere (back to ready, at
 * its place: its availableAt is unchanged).
 */
export async function completeReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  instance: Doc<"jobInstances">,
  worker: Doc<"workers">,
  result: unknown,
  cpuMs: number | undefined,
): Promise<"succeeded" | "pending" | "dead"> {
  const judged = await completeInstance(ctx, job, instance, worker, result, cpuMs);
  let current = (await ctx.db.get(job._id))!;
  const rules = current.validation!;
  switch (judged.kind) {
    case "valid":
      await cancelRunningInstances(ctx, current, "canceled at quorum", judged.capMs);
      await ctx.db.patch(job._id, { progress: 1, validation: { ...rules, outcome: "valid" } });
      current = (await ctx.db.get(job._id))!;
      await finishJob(ctx, current, "succeeded", {
        result: judged.result,
        workerId: worker._id,
        detail: judged.agreeing === 1 ? "accepted alone: trusted worker (adaptive replication)" : `quorum: ${judged.agreeing} results agree`,
      });
      return "succeeded";
    case "no_quorum":
      await ctx.db.patch(job._id, { validation: { ...rules, outcome: "no_quorum" } });
      current = (await ctx.db.get(job._id))!;
      await finishJob(ctx, current, "dead", {
        error: `no_quorum: ${judged.completed} instances returned ${judged.distinct} different results, no ${rules.quorum} agree`,
        workerId: worker._id,
      });
      return "dead";
    case "another":
      await recordEvent(ctx, current, "released", { workerId: worker._id, detail: `instance ${instance.n} returned a result: ${judged.completed} of ${rules.quorum} needed` });
      await settleReplica(ctx, job._id);
      // the job waits for other instances' results (running or yet to start): pending validation
      return "pending";
  }
}

/**
 * An instance failed (its worker said so, or its lease ran out): it counts as one of the job's attempts; while
 * attempts remain (and the error is retryable) another instance may start after the job's retry backoff (the
 * same as a single job's: the job waits delayed meanwhile, its other instances running on), else the job is dead.
 */
export async function failReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  instance: Doc<"jobInstances">,
  error: string,
  retryable: boolean,
  workerId: Id<"workers"> | undefined,
  options: { fromLeaseCheck?: boolean } = {},
): Promise<void> {
  await stopInstance(ctx, job, instance, options);
  const attempt = job.attempt + 1;
  await ctx.db.patch(job._id, { attempt });
  const retries = retryable && attempt < job.maxAttempts;
  await bumpFailed(ctx, job.orgId, Date.now(), { retries: retries ? 1 : undefined, leaseExpiries: options.fromLeaseCheck ? 1 : undefined });
  await recordEvent(ctx, { ...job, attempt }, "failed", { workerId, detail: error });
  if (retries) return await delayReplica(ctx, (await ctx.db.get(job._id))!, error, workerId);
  await finishJob(ctx, (await ctx.db.get(job._id))!, "dead", { error, workerId });
}

/**
 * After a failed instance no other starts before the backoff a single job's retry waits (transitions.ts
 * delayForRetry): the job goes delayed (pending in its lane's counts; an offer of it is withdrawn), its other
 * instances running on, and janitor.promote makes it ready again.
 */
async function delayReplica(ctx: MutationCtx, job: Doc<"jobs">, error: string, workerId: Id<"workers"> | undefined): Promise<void> {
  if (job.status === "pending" && job.queue === "offered") {
    const offeredTo = job.workerId ? await ctx.db.get(job.workerId) : null;
    await withdrawOffer(ctx, job, { requeue: true });
    await giveBackWant(ctx, offeredTo);
  } else if (job.status === "running") {
    await bumpLane(ctx, job, { pending: 1, jobs: moveOf(job, "pending") });
  }
  await delayForRetry(ctx, job, error, workerId, { offerExpiresAt: undefined });
  await kickSummary(ctx, job.orgId);
}

/** An instance given back without a result (released, its worker revoked or gone): another may start, no attempt burnt. */
export async function releaseReplica(ctx: MutationCtx, job: Doc<"jobs">, instance: Doc<"jobInstances">, workerId: Id<"workers">, detail?: string): Promise<void> {
  await stopInstance(ctx, job, instance);
  await recordEvent(ctx, job, "released", { workerId, detail });
  await settleReplica(ctx, job._id);
}
