import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc } from "./_generated/dataModel";
import { internalMutation, mutation, type MutationCtx } from "./_generated/server";
import { operatorFromKey, requireJobInOrg, type Operator } from "./access/auth";
import { cancelJob as cancelOneJob } from "./queue/cancel";
import { ByteBudget, TX_BUDGET } from "./core/budget";
import { purgeJob as purgeOneJob, purgeJobWithin, retryDeadJob } from "./queue/deadLetters";
import { retriedInputsGone } from "./pipelines/dependencies";
import { fail } from "./core/errors";
import { maybeFault } from "./core/faults";
import { checkJobFilter, planJobQuery, type JobFilter } from "./queue/jobQuery";
import { jobFilter } from "./schema";
import { invalidatePage } from "./cache";
import { LIMITS } from "./core/limits";
import { checkText } from "./core/validate";

/**
 * The operator's console (changes). Every function takes an operator key as `apiKey` (or the key of a worker
 * enrolled with canManage) and acts only inside that key's org. Bulk actions run as bounded scheduled batches with a progress row.
 */

/** Jobs looked at per bulk retry/cancel transaction (each retry writes about 4 documents). */
export const BULK_BATCH = 100;
/** Documents a purge batch may delete (jobs with their output and events), and at most TX_BUDGET.purgeBytes of them. */
export const PURGE_ROWS_PER_BATCH = 2_000;

export const retryJob = mutation({
  args: { apiKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    await retryDeadJob(ctx, job, `retried by ${me.name}`);
  },
});

export const cancelJob = mutation({
  args: { apiKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    return await cancelOneJob(ctx, job, `canceled by ${me.name}`);
  },
});

/**
 * Drop the org's result cache entries (of one job type, or all): later identical jobs run again. The first page is
 * dropped now, the rest in scheduled pages: `{ dropped, more }`. Jobs already answered from an entry keep their result.
 */
export const invalidateCache = mutation({
  args: { apiKey: v.string(), type: v.optional(v.string()) },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const type = args.type === undefined ? undefined : checkText(args.type, "type", LIMITS.typeChars);
    return await invalidatePage(ctx, me.orgId, type);
  },
});

/** Delete one dead letter with its output and events: `{ purged }`, false while rows are left (call again). */
export const purgeJob = mutation({
  args: { apiKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    if (job.status !== "dead") fail("invalid_argument", `Only dead letters can be purged here; this job is ${job.status}`);
    return { purged: await purgeOneJob(ctx, job) };
  },
});

/**
 * Retry (dead jobs) or cancel (pending and running jobs) every job the filter selects; jobs in other
 * states are passed over. Returns the bulk operation's id for console:bulkStatus.
 */
export const bulk = mutation({
  args: { apiKey: v.string(), action: v.union(v.literal("retry"), v.literal("cancel")), filter: jobFilter },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    return { bulkId: await startBulk(ctx, me, args.action, checkJobFilter(args.filter)) };
  },
});

/** Delete every dead letter (optionally of one type, submitted within a time range), with its output and events. */
export const purgeDead = mutation({
  args: { apiKey: v.string(), type: v.optional(v.string()), from: v.optional(v.number()), to: v.optional(v.number()) },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const filter = checkJobFilter({ status: "dead", type: args.type, from: args.from, to: args.to });
    return { bulkId: await startBulk(ctx, me, "purge", filter) };
  },
});

async function startBulk(ctx: MutationCtx, me: Operator, action: Doc<"bulkOps">["action"], filter: JobFilter) {
  const bulkId = await ctx.db.insert("bulkOps", {
    orgId: me.orgId,
    action,
    filter,
    ...(me.kind === "worker" ? { by: me.workerId } : { byOperator: me.operatorKeyId }),
    scanned: 0,
    affected: 0,
    batches: 0,
    done: false,
    startedAt: Date.now(),
    armedAt: Date.now(),
    generation: 0,
  });
  await ctx.scheduler.runAfter(0, internal.consoleActions.bulkStep, { bulkId, generation: 0 });
  return bulkId;
}

/**
 * One batch of a bulk operation; schedules the next while jobs are left. A step of an older generation (the
 * watchdog re-armed the operation after a step failed, convex/watchdog.ts) does nothing.
 */
export const bulkStep = internalMutation({
  args: { bulkId: v.id("bulkOps"), generation: v.optional(v.number()) },
  handler: async (ctx, { bulkId, generation }) => {
    const op = await ctx.db.get(bulkId);
    if (!op || op.done || (op.generation ?? 0) !== (generation ?? 0)) return;
    maybeFault("bulk");
    const { scanned, affected, cursor, done } = op.action === "purge" ? await purgeBatch(ctx, op) : await changeBatch(ctx, op);
    await ctx.db.patch(bulkId, {
      scanned: op.scanned + scanned,
      affected: op.affected + affected,
      batches: op.batches + 1,
      cursor,
      done,
      armedAt: Date.now(),
      stalls: undefined,
      ...(done ? { finishedAt: Date.now() } : {}),
    });
    if (!done) await ctx.scheduler.runAfter(0, internal.consoleActions.bulkStep, { bulkId, generation: op.generation ?? 0 });
  },
});

/** Retry or cancel one page of the filter's jobs, continuing from the cursor the last batch left. */
async function changeBatch(ctx: MutationCtx, op: Doc<"bulkOps">) {
  const { query, plan } = planJobQuery(ctx, op.orgId, op.filter);
  // a page may end early at the byte budget; its cursor continues where it stopped
  const page = await query.paginate({ numItems: BULK_BATCH, cursor: op.cursor ?? null, maximumBytesRead: TX_BUDGET.rangeReadBytes });
  let affected = 0;
  for (const job of page.page) {
    if (!plan.matches(job)) continue;
    if (op.action === "retry" && job.status === "dead") {
      // a child whose inputs were purged cannot run again: passed over (retrying it alone says why)
      if (await retriedInputsGone(ctx, job)) continue;
      await retryDeadJob(ctx, job, "retried in bulk by an operator");
      affected++;
    } else if (op.action === "cancel" && (job.status === "pending" || job.status === "running" || job.status === "waiting")) {
      const outcome = await cancelOneJob(ctx, job, "canceled in bulk by an operator");
      if (outcome.status === "canceled" || outcome.cancelRequested) affected++;
    }
  }
  return { scanned: page.page.length, affected, cursor: page.continueCursor, done: page.isDone };
}

/**
 * Purge the first dead letters of the range: each purged job leaves it, so every batch starts from the
 * range's start. A job with more rows than the batch has left is finished by the next batch.
 */
async function purgeBatch(ctx: MutationCtx, op: Doc<"bulkOps">) {
  const { query } = planJobQuery(ctx, op.orgId, op.filter);
  let budget = PURGE_ROWS_PER_BATCH;
  const bytes = new ByteBudget(TX_BUDGET.purgeBytes);
  let scanned = 0;
  let affected = 0;
  for await (const job of query) {
    if (budget <= 0 || bytes.exhausted) return { scanned, affected, cursor: undefined, done: false };
    scanned++;
    const deleted = await purgeJobWithin(ctx, job, budget, bytes);
    if (deleted === null) return { scanned, affected, cursor: undefined, done: false };
    budget -= deleted;
    affected++;
  }
  return { scanned, affected, cursor: undefined, done: true };
}
