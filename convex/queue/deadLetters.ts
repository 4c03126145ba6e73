import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { deleteBodies, errorOf } from "../core/bodies";
import { ByteBudget, takeWithinBudget, TX_BUDGET } from "../core/budget";
import { deleteCheckpoint } from "./checkpoints";
import { bumpFinished, bumpLane, recordEvent, kickForJobs, kickSummary, laneFor, routingCapabilities, classOf } from "../lanes/entry";
import { fail } from "../core/errors";
import { moveOf } from "../observability/entry";
import { LIMITS } from "../core/limits";
import { checkIntegerInRange } from "../core/validate";
import { deliveryOf } from "../webhooks/entry";
import { noteBatchJobPurged, noteBatchJobRetried, retriedInputsGone, insertParentRefs } from "../pipelines/entry";
import { newRound } from "../trust/entry";

const PURGE_ROWS_PER_CALL = 500;

export async function listDeadLetters(ctx: QueryCtx, orgId: Id<"orgs">, limit?: number) {
  const take = checkIntegerInRange(limit ?? LIMITS.deadLettersListed, "limit", 1, LIMITS.deadLettersListed);
  // one budget for the rows and their errors' whole texts: a list may be shorter than asked, never too big
  const budget = new ByteBudget();
  const { rows: jobs } = await takeWithinBudget(
    ctx.db
      .query("jobs")
      .withIndex("by_org_status", (q) => q.eq("orgId", orgId).eq("status", "dead"))
      .order("desc"),
    take,
    budget,
  );
  const letters = [];
  for (const job of jobs) {
    const error = await errorOf(ctx, job);
    letters.push({
      jobId: job._id,
      type: job.type,
      attempt: job.attempt,
      maxAttempts: job.maxAttempts,
      error,
      requiredCapabilities: job.requiredCapabilities,
      finishedAt: job.finishedAt,
    });
    budget.spend(error?.length ?? 0);
    if (budget.exhausted) break;
  }
  return letters;
}

/**
 * A dead letter goes back to the head of its lane with a fresh set of attempts. Its lane may have been
 * deleted by the maintenance pass meanwhile: it finds (or recreates) the lane of its routing key.
 */
export async function retryDeadJob(ctx: MutationCtx, job: Doc<"jobs">, detail = "dead letter retried by operator") {
  if (job.status !== "dead") fail("invalid_argument", `Only dead jobs can be retried; this one is ${job.status}`);
  // a child runs again only with every input it was submitted with; it names them again until it ends
  const gone = await retriedInputsGone(ctx, job);
  if (gone) fail("gone", `This job cannot run again: ${gone}`);
  if (job.dependsOn) await insertParentRefs(ctx, job.orgId, job._id, job.dependsOn);
  const lane = await laneFor(ctx, job.orgId, routingCapabilities(job.type, job.requiredCapabilities), classOf(job.requirements), job.app);
  job = { ...job, laneId: lane._id };
  await ctx.db.patch(job._id, {
    laneId: lane._id,
    workerId: undefined,
    status: "pending",
    queue: "ready",
    attempt: 0,
    availableAt: Date.now(),
    finishedAt: undefined,
    cancelRequested: undefined,
    progress: undefined,
    statusText: undefined,
    progressInstance: undefined,
    // a replicated job starts a new round: the instances of this one stay to be read, but no longer count
    ...(job.validation ? { validation: newRound(job.validation) } : {}),
  });
  await bumpFinished(ctx, job.orgId, "dead", -1);
  await bumpLane(ctx, job, { pending: 1, jobs: moveOf(job, "pending") });
  await noteBatchJobRetried(ctx, job);
  await recordEvent(ctx, { ...job, attempt: 0 }, "retried", { detail });
  await kickForJobs(ctx, job.orgId);
  await kickSummary(ctx, job.orgId);
}

/**
 * Delete a finished job with its output, events, instances, kept instance results, bodies and checkpoint. Deletes at most PURGE_ROWS_PER_CALL
 * child rows and TX_BUDGET.purgeBytes of them per call (`bytes` may be shared by several jobs of one
 * transaction); returns false when the job still has rows left (call again), true once the job itself is gone.
 */
export async function purgeJob(ctx: MutationCtx, job: Doc<"jobs">, bytes = new ByteBudget(TX_BUDGET.purgeBytes)): Promise<boolean> {
  return (await purgeJobWithin(ctx, job, PURGE_ROWS_PER_CALL, bytes)) !== null;
}

/**
 * As purgeJob, deleting at most `budget` child rows and `bytes` of them (its bodies and checkpoint, deleted
 * last with the job, are charged too): the rows deleted (the job included) once the job is gone, or null
 * when rows are left (call again).
 */
export async function purgeJobWithin(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  budget: number,
  bytes = new ByteBudget(TX_BUDGET.purgeBytes),
): Promise<number | null> {
  if (job.status === "pending" || job.status === "running" || job.status === "waiting") {
    fail("invalid_argument", `Only finished jobs can be purged; this one is ${job.status}`);
  }
  const allowed = budget;
  const output = await takeWithinBudget(
    ctx.db.query("jobOutput").withIndex("by_job_seq", (q) => q.eq("jobId", job._id)),
    budget,
    bytes,
  );
  for (const chunk of output.rows) await ctx.db.delete(chunk._id);
  budget -= output.rows.length;
  if (output.cut) return null;
  const events = await takeWithinBudget(ctx.db.query("jobEvents").withIndex("by_job", (q) => q.eq("jobId", job._id)), budget, bytes);
  for (const event of events.rows) await ctx.db.delete(event._id);
  budget -= events.rows.length;
  if (budget <= 0 || events.cut || bytes.exhausted) return null;
  // a replicated job's instances (a row of an older shape may keep its result), then its distinct results kept
  // beside them (up to 256 KiB each)
  const instances = await takeWithinBudget(ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", job._id)), budget, bytes);
  for (const row of instances.rows) await ctx.db.delete(row._id);
  budget -= instances.rows.length;
  if (budget <= 0 || instances.cut || bytes.exhausted) return null;
  const results = await takeWithinBudget(ctx.db.query("instanceResults").withIndex("by_job_hash", (q) => q.eq("jobId", job._id)), budget, bytes);
  for (const result of results.rows) await ctx.db.delete(result._id);
  budget -= results.rows.length;
  if (budget <= 0 || results.cut || bytes.exhausted) return null;
  bytes.spend(await deleteCheckpoint(ctx, job._id));
  bytes.spend(await deleteBodies(ctx, job._id));
  const delivery = await deliveryOf(ctx, job._id); // its webhook delivery, if any, goes with it
  if (delivery) await ctx.db.delete(delivery._id);
  await noteBatchJobPurged(ctx, job);
  await ctx.db.delete(job._id);
  await bumpFinished(ctx, job.orgId, job.status, -1, undefined, { jobs: moveOf(job, undefined) });
  await kickSummary(ctx, job.orgId);
  return allowed - budget + 1;
}
