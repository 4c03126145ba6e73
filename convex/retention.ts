import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import type { Doc } from "./_generated/dataModel";
import type { MutationCtx } from "./_generated/server";
import { carriesMetrics, unfoldedLaneCounts } from "./lanes/counters";
import { ByteBudget, TX_BUDGET } from "./core/budget";
import { purgeJob } from "./queue/deadLetters";
import { sealOf } from "./pipelines/batchSeals";
import { BATCH_SHARDS } from "./pipelines/dependencies";
import { TIMING } from "./core/limits";
import { weeksBefore } from "./trust/creditWeeks";
import { childReading } from "./pipelines/parentRefs";
import { deleteRevokedWorker, workerRowBudget } from "./queue/workerRows";

const JOBS_PER_BATCH = 10;
// jobs read per transaction: the parents kept for a child that has not ended are passed over, not deleted
const JOBS_SCANNED_PER_BATCH = 100;
const BUCKETS_PER_BATCH = 200;
const LANES_PER_BATCH = 25;
const WAITERS_PER_LANE = 500;
const SHARDS_PER_LANE = 16;

/** Retention age: args, else the FARMHAND_RETENTION_MS environment variable, else 7 days. */
function retentionMs(olderThanMs?: number): number {
  if (olderThanMs !== undefined) return olderThanMs;
  const fromEnv = Number(process.env.FARMHAND_RETENTION_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : TIMING.defaultRetentionMs;
}

const sweepCursor = v.object({ finishedAt: v.number(), creationTime: v.number() });
type SweepCursor = { finishedAt: number; creationTime: number };

/** Finished jobs older than `cutoff`, in finishing order, after the last one a run handled (`after`). */
async function oldFinishedJobs(ctx: MutationCtx, cutoff: number, after: SweepCursor | undefined, count: number): Promise<Doc<"jobs">[]> {
  const sameTime = after
    ? await ctx.db
        .query("jobs")
        .withIndex("by_finished", (q) => q.eq("finishedAt", after.finishedAt).gt("_creationTime", after.creationTime))
        .take(count)
    : [];
  const later = await ctx.db
    .query("jobs")
    .withIndex("by_finished", (q) => (after ? q.gt("finishedAt", after.finishedAt) : q.gte("finishedAt", 0)).lt("finishedAt", cutoff))
    .take(count - sameTime.length);
  return [...sameTime.filter((job) => job.finishedAt! < cutoff), ...later];
}

/**
 * Delete finished jobs (with their output and events) older than the retention age, and throughput
 * buckets older than two hours, a bounded batch per transaction; reschedules itself while work remains. A succeeded
 * job that a child not yet ended reads as its input (pipelines/parentRefs.ts) is kept, and passed over: `after` is where
 * the next run goes on.
 */
export const sweep = internalMutation({
  args: { olderThanMs: v.optional(v.number()), after: v.optional(sweepCursor) },
  handler: async (ctx, { olderThanMs, after }) => {
    const age = retentionMs(olderThanMs);
    const cutoff = Date.now() - age;
    const jobs = await oldFinishedJobs(ctx, cutoff, after, JOBS_SCANNED_PER_BATCH);
    let more = jobs.length === JOBS_SCANNED_PER_BATCH;
    // one byte budget for every job of the batch: ten jobs of full output would not fit one transaction
    const bytes = new ByteBudget(TX_BUDGET.purgeBytes);
    let cursor = after;
    let deleted = 0;
    let kept = 0;
    for (const job of jobs) {
      if (deleted === JOBS_PER_BATCH) {
        more = true;
        break;
      }
      if (await childReading(ctx, job)) kept++;
      else if (!(await purgeJob(ctx, job, bytes))) {
        // rows are left: the next run starts again at this job
        more = true;
        break;
      } else deleted++;
      cursor = { finishedAt: job.finishedAt!, creationTime: job._creationTime };
    }
    const oldMinute = Math.floor((Date.now() - 2 * 60 * 60_000) / 60_000);
    const buckets = await ctx.db
      .query("throughput")
      .withIndex("by_minute", (q) => q.lt("minute", oldMinute))
      .take(BUCKETS_PER_BATCH);
    for (const bucket of buckets) await ctx.db.delete(bucket._id);
    if (buckets.length === BUCKETS_PER_BATCH) more = true;
    if (more) await ctx.scheduler.runAfter(0, internal.retention.sweep, { olderThanMs: age, ...(cursor ? { after: cursor } : {}) });
    else await ctx.scheduler.runAfter(0, internal.retention.sweepLanes, {});
    return { deletedJobs: deleted, keptJobs: kept, deletedBuckets: buckets.length, more };
  },
});

/** Nothing pending (ready, offered or delayed) and nothing running: a lane that only costs reads. */
async function laneIsEmpty(ctx: MutationCtx, lane: Doc<"lanes">): Promise<boolean> {
  const shards = await ctx.db
    .query("laneShards")
    .withIndex("by_lane_shard", (q) => q.eq("laneId", lane._id))
    .take(SHARDS_PER_LANE);
  const unfolded = await unfoldedLaneCounts(ctx, lane._id, 500);
  if (!unfolded.complete) return false;
  // a total alone may be off by what is not folded yet: only the sum counts
  const pending = shards.reduce((sum, s) => sum + s.pending, unfolded.pending);
  const running = shards.reduce((sum, s) => sum + s.running, unfolded.running);
  if (pending !== 0 || running !== 0) return false;
  for (const queue of ["ready", "offered"] as const) {
    const job = await ctx.db
      .query("jobs")
      .withIndex("by_lane_fair", (q) => q.eq("laneId", lane._id).eq("queue", queue))
      .first();
    if (job) return false;
  }
  const delayed = await ctx.db
    .query("jobs")
    .withIndex("by_lane_delayed", (q) => q.eq("laneId", lane._id).eq("queue", "delayed"))
    .first();
  return delayed === null;
}

/**
 * The maintenance pass (run by the retention sweep when it is done, so one writer): delete lanes that
 * hold nothing pending or running, with their counter shards and waiting lines, a bounded batch per
 * transaction. An org cannot fill its lane cap for good: a later submit or a retried dead letter makes
 * its lane again (and the new lane learns about the workers already waiting).
 */
export const sweepLanes = internalMutation({
  args: { after: v.optional(v.number()) },
  handler: async (ctx, { after }) => {
    const lanes = await ctx.db
      .query("lanes")
      .withIndex("by_creation_time", (q) => q.gt("_creationTime", after ?? 0))
      .take(LANES_PER_BATCH);
    let deleted = 0;
    for (const lane of lanes) {
      if (!(await laneIsEmpty(ctx, lane))) continue;
      const waiting = await ctx.db
        .query("laneWaiters")
        .withIndex("by_lane_since", (q) => q.eq("laneId", lane._id))
        .take(WAITERS_PER_LANE + 1);
      if (waiting.length > WAITERS_PER_LANE) continue; // left for a quieter pass
      for (const row of waiting) await ctx.db.delete(row._id);
      const shards = await ctx.db
        .query("laneShards")
        .withIndex("by_lane_shard", (q) => q.eq("laneId", lane._id))
        .take(SHARDS_PER_LANE);
      for (const shard of shards) await ctx.db.delete(shard._id);
      const deltas = await ctx.db
        .query("counterDeltas")
        .withIndex("by_lane", (q) => q.eq("laneId", lane._id))
        .take(500);
      // their counts of this lane net to zero; what they tell the metrics (jobs moved, other events) stays to be folded,
      // and so do their client key's counts (the key's totals had the rest of them)
      for (const delta of deltas) {
        const keyCounts = delta.clientKeyId !== undefined && (delta.pending !== undefined || delta.running !== undefined);
        if (carriesMetrics(delta) || keyCounts) {
          await ctx.db.patch(delta._id, { laneId: undefined, runMs: undefined, ...(keyCounts ? {} : { pending: undefined, running: undefined }) });
        } else await ctx.db.delete(delta._id);
      }
      await dropFairRows(ctx, lane);
      await ctx.db.delete(lane._id);
      deleted++;
    }
    const more = lanes.length === LANES_PER_BATCH;
    if (more) await ctx.scheduler.runAfter(0, internal.retention.sweepLanes, { after: lanes[lanes.length - 1]._creationTime });
    else await ctx.scheduler.runAfter(0, internal.retention.sweepRecords, {});
    return { deletedLanes: deleted, more };
  },
});

/** A deleted lane's virtual times and the cursor of a level of it that did not fit in a round (queue/fairRound.ts). */
async function dropFairRows(ctx: MutationCtx, lane: Doc<"lanes">) {
  const clocks = await ctx.db
    .query("fairClocks")
    .withIndex("by_lane", (q) => q.eq("laneId", lane._id))
    .take(WAITERS_PER_LANE);
  for (const row of clocks) await ctx.db.delete(row._id);
  const cursors = await ctx.db
    .query("fairCursors")
    .withIndex("by_org", (q) => q.eq("orgId", lane.orgId))
    .take(WAITERS_PER_LANE);
  for (const row of cursors) if (row.laneId === lane._id) await ctx.db.delete(row._id);
}

const WORKERS_PER_BATCH = 20;
const RECORDS_PER_BATCH = 200;
const DAY_MS = 24 * 60 * 60_000;

/**
 * The last pass of the sweep: what would otherwise only grow. Workers revoked (or gone with workers:leave)
 * longer ago than the retention age, with their rows (queue/workerRows.ts); finished bulk operations and
 * enrollment tokens past it; credit days (and weeks) older than the retention age and the current week; fairness keys'
 * passes idle a day. Presence,
 * waiting-line and slot rows are one per worker and go with it; a job's webhook delivery goes with the job.
 */
export const sweepRecords = internalMutation({
  args: { olderThanMs: v.optional(v.number()) },
  handler: async (ctx, { olderThanMs }) => {
    const age = retentionMs(olderThanMs);
    const now = Date.now();
    const cutoff = now - age;
    const workers = await ctx.db
      .query("workers")
      .withIndex("by_revoked_at", (q) => q.eq("revoked", true).lt("revokedAt", cutoff))
      .take(WORKERS_PER_BATCH);
    let workersLeft = false;
    const budget = workerRowBudget();
    for (const worker of workers) if (!(await deleteRevokedWorker(ctx, worker, budget))) workersLeft = true;
    const bulkOps = await ctx.db
      .query("bulkOps")
      .withIndex("by_done_armed", (q) => q.eq("done", true).lt("armedAt", cutoff))
      .take(RECORDS_PER_BATCH);
    for (const op of bulkOps) await ctx.db.delete(op._id);
    const enrollments = await ctx.db
      .query("enrollments")
      .withIndex("by_expires", (q) => q.lt("expiresAt", cutoff))
      .take(RECORDS_PER_BATCH);
    for (const row of enrollments) await ctx.db.delete(row._id);
    // the week's days stay whatever the retention age: this week's credit is summed from them
    const oldestDay = Math.floor((now - Math.max(age, 8 * DAY_MS)) / DAY_MS);
    const days = await ctx.db
      .query("creditDays")
      .withIndex("by_day", (q) => q.lt("day", oldestDay))
      .take(RECORDS_PER_BATCH);
    for (const day of days) await ctx.db.delete(day._id);
    // a week's row goes once every day of it would have
    const weeks = await weeksBefore(ctx, oldestDay - 6, RECORDS_PER_BATCH);
    for (const week of weeks) await ctx.db.delete(week._id);
    // a fairness key idle a day comes back at its lanes' virtual time anyway: its pass row only costs space
    const passes = await ctx.db
      .query("fairPasses")
      .withIndex("by_scope_at", (q) => q.eq("scope", "flow").lt("at", now - DAY_MS))
      .take(RECORDS_PER_BATCH);
    for (const pass of passes) await ctx.db.delete(pass._id);
    const deleted = { workers: workers.length, bulkOps: bulkOps.length, enrollments: enrollments.length, creditDays: days.length, creditWeeks: weeks.length, fairPasses: passes.length };
    const more = workersLeft || workers.length === WORKERS_PER_BATCH || [bulkOps, enrollments, days, weeks, passes].some((rows) => rows.length === RECORDS_PER_BATCH);
    if (more) await ctx.scheduler.runAfter(0, internal.retention.sweepRecords, { olderThanMs: age });
    else await ctx.scheduler.runAfter(0, internal.retention.sweepBatches, {});
    return { deleted, more };
  },
});

const BATCH_ROWS_PER_PASS = 100;

/**
 * After the records: a batch whose jobs are all gone (purged) keeps nothing worth counting, so its counter rows
 * (its shards, pipelines/dependencies.ts) and its seal (pipelines/batchSeals.ts) go. A pass walks the batch rows in creation order, BATCH_ROWS_PER_PASS at a
 * time, asking each batch once whether one of its jobs is left (one index read). A batch a child still waits on
 * keeps its rows (no such edge outlives its batch's jobs, but the rows would be the child's only way out). A job
 * submitted to the batch later makes its rows again; a child submitted later is told the batch does not exist.
 */
export const sweepBatches = internalMutation({
  args: { after: v.optional(v.number()) },
  handler: async (ctx, { after }) => {
    const rows = await ctx.db
      .query("batches")
      .withIndex("by_creation_time", (q) => q.gt("_creationTime", after ?? 0))
      .take(BATCH_ROWS_PER_PASS);
    const checked = new Set<string>();
    let deletedRows = 0;
    for (const row of rows) {
      const key = `${row.orgId}:${row.batchId}`;
      if (checked.has(key)) continue;
      checked.add(key);
      const job = await ctx.db
        .query("jobs")
        .withIndex("by_org_batch", (q) => q.eq("orgId", row.orgId).eq("batchId", row.batchId))
        .first();
      if (job) continue;
      const edge = await ctx.db
        .query("jobDependencies")
        .withIndex("by_org_batch", (q) => q.eq("orgId", row.orgId).eq("batchId", row.batchId))
        .first();
      if (edge) continue;
      const shards = await ctx.db
        .query("batches")
        .withIndex("by_org_batch", (q) => q.eq("orgId", row.orgId).eq("batchId", row.batchId))
        .take(BATCH_SHARDS + 1);
      for (const shard of shards) await ctx.db.delete(shard._id);
      deletedRows += shards.length;
      const seal = await sealOf(ctx, row.orgId, row.batchId);
      if (seal) await ctx.db.delete(seal._id);
    }
    const more = rows.length === BATCH_ROWS_PER_PASS;
    if (more) await ctx.scheduler.runAfter(0, internal.retention.sweepBatches, { after: rows[rows.length - 1]._creationTime });
    return { batchesChecked: checked.size, deletedRows, more };
  },
});
