import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { creditTotalOf } from "./credit";
import { sum } from "./creditSums";
import { weeksOf } from "./creditWeeks";

/**
 * Deleting a revoked worker for good: when its machine joins again (workers:enroll with the same machineId
 * replaces it, so leaving and joining does not pile up rows) or when the retention sweep finds it revoked for
 * longer than the retention age. Its rows beside it go too — presence, waiting lines, slot count, doorbell,
 * credit, trust streaks and quota days — except that a successor (the same machine's new worker) inherits its
 * credit (never its trust: a new key earns its own). Jobs, instances and events that name it keep its id (they show
 * it as a worker that no longer exists). Every read is bounded: ROWS_PER_TABLE rows per table; a worker with more
 * (streaks of many job types, many quota days) keeps its row until a later call has deleted the rest.
 */

const ROWS_PER_TABLE = 500;

/** Returns false when rows beside the worker are left (call again; its row stays until then). */
export async function deleteRevokedWorker(ctx: MutationCtx, worker: Doc<"workers">, successor?: Id<"workers">): Promise<boolean> {
  if (!worker.revoked) throw new Error("only a revoked worker is deleted");
  const workerId = worker._id;
  const beside = [
    ...(await ctx.db.query("presence").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("workerSlots").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("laneWaiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("inbox").withIndex("by_worker_kind", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
  ];
  for (const row of beside) await ctx.db.delete(row._id);
  const creditDone = await moveCredit(ctx, workerId, successor);
  const streaks = await ctx.db.query("trustStreaks").withIndex("by_worker_type", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE);
  const quotaDays = await ctx.db.query("quotaUse").withIndex("by_worker_day", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE);
  for (const row of [...streaks, ...quotaDays]) await ctx.db.delete(row._id);
  if (!creditDone || streaks.length === ROWS_PER_TABLE || quotaDays.length === ROWS_PER_TABLE) return false;
  await ctx.db.delete(workerId);
  return true;
}

/**
 * A deleted worker's credit rows (days, weeks, all time) go, or pass to its successor: added to the successor's
 * row of the same day or week, or renamed. Returns false when days or weeks are left (ROWS_PER_TABLE each a call).
 */
async function moveCredit(ctx: MutationCtx, workerId: Id<"workers">, successor?: Id<"workers">): Promise<boolean> {
  const days = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", workerId))
    .take(ROWS_PER_TABLE);
  for (const day of days) {
    const theirs = successor
      ? await ctx.db
          .query("creditDays")
          .withIndex("by_worker_day", (q) => q.eq("workerId", successor).eq("day", day.day))
          .unique()
      : null;
    await passOn(ctx, day, theirs, successor);
  }
  const weeks = await weeksOf(ctx, workerId, ROWS_PER_TABLE);
  for (const week of weeks) {
    const theirs = successor
      ? await ctx.db
          .query("creditWeeks")
          .withIndex("by_worker_week", (q) => q.eq("workerId", successor).eq("week", week.week))
          .unique()
      : null;
    await passOn(ctx, week, theirs, successor);
  }
  const total = await creditTotalOf(ctx, workerId);
  if (total) {
    // its pending sum is its own results' (denied when judged, the worker revoked): it passes to no one
    if (total.pendingCpuMs !== undefined || total.pendingJobs !== undefined) await ctx.db.patch(total._id, { pendingCpuMs: undefined, pendingJobs: undefined });
    await passOn(ctx, total, successor ? await creditTotalOf(ctx, successor) : null, successor);
  }
  return days.length < ROWS_PER_TABLE && weeks.length < ROWS_PER_TABLE;
}

type CreditRow = Doc<"creditDays"> | Doc<"creditWeeks"> | Doc<"creditTotals">;

async function passOn<R extends CreditRow>(ctx: MutationCtx, row: R, theirs: R | null, successor: Id<"workers"> | undefined) {
  if (!successor) return await ctx.db.delete(row._id);
  if (theirs) {
    await ctx.db.patch(theirs._id, sum(theirs, row));
    await ctx.db.delete(row._id);
  } else await ctx.db.patch(row._id, { workerId: successor });
}

/** Revoked workers of this machine that a new enrollment replaces (at most a few: each enrollment replaces them). */
export async function revokedOfMachine(ctx: MutationCtx, orgId: Id<"orgs">, machineId: string): Promise<Doc<"workers">[]> {
  const rows = await ctx.db
    .query("workers")
    .withIndex("by_org_machine", (q) => q.eq("orgId", orgId).eq("machineId", machineId))
    .take(50);
  return rows.filter((w) => w.revoked);
}
