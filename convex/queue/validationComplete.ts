import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { bumpFailed, bumpLane, recordEvent, giveBackWant, withdrawOffer, kickSummary } from "../lanes/entry";
import { delayForRetry, finishJob } from "./transitions";
import { cancelRunningInstances, completeInstance, countable, failInstance, instancesOf, maxErrorsOf, releaseInstance, settleReplica, type Instance } from "../trust/entry";
import { moveOf } from "../observability/entry";

/**
 * The instances of a replicated job end here (workers:complete, fail, release, the instance lease janitor, a
 * revoke). A result is judged with the others: the job succeeds with the agreed result (instances still running
 * are canceled at quorum), goes dead with `no_quorum`, or wants another instance elsewhere (back to ready, at
 * its place: its availableAt is unchanged). A failure is one error result: the job dies only once
 * `maxErrorInstances` of its instances failed, each on another worker.
 */
export async function completeReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  instance: Instance,
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
        agreeing: judged.agreeing,
        detail: judged.agreeing === 1 ? "accepted alone: trusted worker (adaptive replication)" : `quorum: ${judged.agreeing} results agree`,
      });
      return "succeeded";
    case "no_quorum":
      await endWithoutVerdict(ctx, current, "no_quorum", `no_quorum: ${judged.completed} instances returned ${judged.distinct} different results, no ${rules.quorum} agree`, worker._id);
      return "dead";
    case "another":
      await recordEvent(ctx, current, "released", { workerId: worker._id, detail: `instance ${instance.n} returned a result: ${judged.completed} of ${rules.quorum} needed` });
      // the job waits for other instances' results (running or yet to start): pending validation
      return (await settleOrEnd(ctx, job._id)) ?? "pending";
  }
}

async function endWithoutVerdict(ctx: MutationCtx, job: Doc<"jobs">, outcome: "no_quorum" | "too_many_errors", error: string, workerId?: Id<"workers">) {
  await ctx.db.patch(job._id, { validation: { ...job.validation!, outcome } });
  await finishJob(ctx, (await ctx.db.get(job._id))!, "dead", { error, workerId });
}

/**
 * The job wants what its instances now say (trust/instances.ts settleReplica); a round that may start no more
 * instances, none running and no verdict reached, ends dead with `no_quorum`.
 */
export async function settleOrEnd(ctx: MutationCtx, jobId: Id<"jobs">): Promise<"dead" | undefined> {
  if ((await settleReplica(ctx, jobId)) !== "exhausted") return undefined;
  const job = (await ctx.db.get(jobId))!;
  await endWithoutVerdict(ctx, job, "no_quorum", `no_quorum: ${job.validation!.started} instances started in this round without ${job.validation!.quorum} agreeing results`);
  return "dead";
}

/**
 * An instance failed (its worker said so, retryable or not, or its lease ran out): one error result of its round.
 * Its worker, machine and donor stay excluded from the job; the job's attempts are not used. Once
 * `maxErrorInstances` instances of the round failed (each on another worker, so never one donor's veto) the job is
 * dead; until then another instance may start after the backoff a single job's retry waits (the job is delayed,
 * its other instances running on).
 */
export async function failReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  instance: Instance,
  error: string,
  workerId: Id<"workers"> | undefined,
  options: { fromLeaseCheck?: boolean } = {},
): Promise<void> {
  await failInstance(ctx, job, instance, error, options);
  const rules = job.validation!;
  const { failed } = await countable(ctx, await instancesOf(ctx, job._id, rules.round));
  // the metrics count a failure that lets another instance start as a retry
  const retries = failed.length < maxErrorsOf(rules);
  await bumpFailed(ctx, job.orgId, Date.now(), { retries: retries ? 1 : undefined, leaseExpiries: options.fromLeaseCheck ? 1 : undefined });
  await recordEvent(ctx, job, "failed", { workerId, detail: `instance ${instance.n} (${failed.length} of ${maxErrorsOf(rules)} errors): ${error}` });
  const current = (await ctx.db.get(job._id))!;
  if (!retries) {
    return await endWithoutVerdict(ctx, current, "too_many_errors", `too_many_errors: ${failed.length} instances failed, each on another worker; the last: ${error}`, workerId);
  }
  await delayReplica(ctx, current, error, workerId, failed.length);
}

/**
 * After a failed instance no other starts before the backoff a single job's retry waits (transitions.ts
 * delayForRetry), by the round's errors so far: the job goes delayed (pending in its lane's counts; an offer of it
 * is withdrawn), its other instances running on, and janitor.promote makes it ready again.
 */
async function delayReplica(ctx: MutationCtx, job: Doc<"jobs">, error: string, workerId: Id<"workers"> | undefined, errors: number): Promise<void> {
  if (job.status === "pending" && job.queue === "offered") {
    const offeredTo = job.workerId ? await ctx.db.get(job.workerId) : null;
    await withdrawOffer(ctx, job, { requeue: true });
    await giveBackWant(ctx, offeredTo);
  } else if (job.status === "running") {
    await bumpLane(ctx, job, { pending: 1, jobs: moveOf(job, "pending") });
  }
  await delayForRetry(ctx, { ...job, attempt: errors }, error, workerId, { offerExpiresAt: undefined });
  await kickSummary(ctx, job.orgId);
}

/** An instance given back without a result (released, its worker revoked or gone): another may start, no vote cast. */
export async function releaseReplica(ctx: MutationCtx, job: Doc<"jobs">, instance: Instance, workerId: Id<"workers">, detail?: string): Promise<void> {
  await releaseInstance(ctx, job, instance);
  await recordEvent(ctx, job, "released", { workerId, detail });
  await settleOrEnd(ctx, job._id);
}
