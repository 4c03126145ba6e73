import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { creditTotalOf, sum, weeksOf } from "../trust/entry";

/**
 * Deleting a revoked worker for good: when its machine joins again (workers:enroll with the same machineId
 * replaces it, so leaving and joining does not pile up rows) or when the retention sweep finds it revoked for
 * longer than the retention age. Its rows beside it go too — presence, waiting lines, slot count, doorbell,
 * credit, trust streaks and quota days — except that a successor (the same machine's new worker) inherits its
 * credit (never its trust: a new key earns its own). Jobs, instances and events that name it keep its id (they show
 * it as a worker that no longer exists). Every read is bounded by one RowBudget for the whole transaction (a worker
 * with more rows, or the workers after it, keep their rows until a later call has deleted the rest): nine tables of
 * a few hundred rows for each of twenty workers would otherwise pass Convex's 8,192 writes.
 */

/** Rows one transaction deletes or moves at most, all workers together (each may cost two writes: a patch and a delete). */
export const WORKER_ROWS_PER_CALL = 1500;

export type RowBudget = { left: number };
export const workerRowBudget = (): RowBudget => ({ left: WORKER_ROWS_PER_CALL });

/** Up to what the budget leaves of a range's rows; the budget pays for what was read. */
async function takeWithin<T>(budget: RowBudget, read: (limit: number) => Promise<T[]>): Promise<{ rows: T[]; full: boolean }> {
  if (budget.left <= 0) return { rows: [], full: true };
  const limit = budget.left;
  const rows = await read(limit);
  budget.left -= rows.length;
  return { rows, full: rows.length === limit };
}

/** Returns false when rows beside the worker are left (call again; its row stays until then). */
export async function deleteRevokedWorker(ctx: MutationCtx, worker: Doc<"workers">, budget: RowBudget, successor?: Id<"workers">): Promise<boolean> {
  if (!worker.revoked) throw new Error("only a revoked worker is deleted");
  const workerId = worker._id;
  const ranges = [
    (n: number) => ctx.db.query("presence").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("workerSlots").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("laneWaiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("inbox").withIndex("by_worker_kind", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("trustStreaks").withIndex("by_worker_type", (q) => q.eq("workerId", workerId)).take(n),
    (n: number) => ctx.db.query("quotaUse").withIndex("by_worker_day", (q) => q.eq("workerId", workerId)).take(n),
  ];
  let left = false;
  for (const range of ranges) {
    const { rows, full } = await takeWithin<{ _id: Id<"presence" | "waiters" | "workerSlots" | "laneWaiters" | "inbox" | "trustStreaks" | "quotaUse"> }>(budget, range);
    for (const row of rows) await ctx.db.delete(row._id);
    if (full) left = true;
  }
  if (!(await moveCredit(ctx, workerId, budget, successor))) left = true;
  if (left) return false;
  await ctx.db.delete(workerId);
  return true;
}

/**
 * A deleted worker's credit rows (days, weeks, all time) go, or pass to its successor: added to the successor's
 * row of the same day or week, or renamed. Returns false when days or weeks are left (the budget ran out).
 */
async function moveCredit(ctx: MutationCtx, workerId: Id<"workers">, budget: RowBudget, successor?: Id<"workers">): Promise<boolean> {
  const days = await takeWithin(budget, (n) =>
    ctx.db
      .query("creditDays")
      .withIndex("by_worker_day", (q) => q.eq("workerId", workerId))
      .take(n),
  );
  for (const day of days.rows) {
    const theirs = successor
      ? await ctx.db
          .query("creditDays")
          .withIndex("by_worker_day", (q) => q.eq("workerId", successor).eq("day", day.day))
          .unique()
      : null;
    await passOn(ctx, day, theirs, successor);
  }
  const weeks = await takeWithin(budget, (n) => weeksOf(ctx, workerId, n));
  for (const week of weeks.rows) {
    const theirs = successor
      ? await ctx.db
          .query("creditWeeks")
          .withIndex("by_worker_week", (q) => q.eq("workerId", successor).eq("week", week.week))
          .unique()
      : null;
    await passOn(ctx, week, theirs, successor);
  }
  if (days.full || weeks.full) return false;
  const total = await creditTotalOf(ctx, workerId);
  if (total) {
    // its pending sum is its own results' (denied when judged, the worker revoked): it passes to no one
    if (total.pendingCpuMs !== undefined || total.pendingJobs !== undefined) await ctx.db.patch(total._id, { pendingCpuMs: undefined, pendingJobs: undefined });
    await passOn(ctx, total, successor ? await creditTotalOf(ctx, successor) : null, successor);
  }
  return true;
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
