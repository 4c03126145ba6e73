import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { added, NOTHING, sum, type Credit, type Outcome } from "./creditSums";

/**
 * Each worker's credit (and energy given) per week (`week`: the UTC day its Monday is), one row per worker and week
 * beside its day rows, indexed by CPU time: the week's leaderboard reads its top rows, exact however many workers gave that
 * week. Written with the day row, by the mutation that credits an attempt (the worker's own row, so finishing
 * jobs on different machines never conflict).
 */

async function weekRow(ctx: QueryCtx, workerId: Id<"workers">, week: number) {
  return await ctx.db
    .query("creditWeeks")
    .withIndex("by_worker_week", (q) => q.eq("workerId", workerId).eq("week", week))
    .unique();
}

/**
 * Add an attempt's credit to the worker's week. Its first credit of a week starts the row from its day rows of
 * that week (this one's already added), so a week that began before week rows existed is counted whole.
 */
export async function addWeekCredit(ctx: MutationCtx, worker: Pick<Doc<"workers">, "_id" | "orgId">, week: number, credit: Credit, outcome: Outcome): Promise<void> {
  const row = await weekRow(ctx, worker._id, week);
  if (row) return await ctx.db.patch(row._id, added(row, credit, outcome));
  await startWeek(ctx, worker, week);
}

/** Add an attempt's energy to the worker's week (its day row already holds it: a new week row starts from those). */
export async function addWeekEnergy(ctx: MutationCtx, worker: Pick<Doc<"workers">, "_id" | "orgId">, week: number, joules: number): Promise<void> {
  const row = await weekRow(ctx, worker._id, week);
  if (row) return await ctx.db.patch(row._id, { energyJ: (row.energyJ ?? 0) + joules });
  await startWeek(ctx, worker, week);
}

async function startWeek(ctx: MutationCtx, worker: Pick<Doc<"workers">, "_id" | "orgId">, week: number): Promise<void> {
  const days = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", worker._id).gte("day", week).lt("day", week + 7))
    .take(7);
  await ctx.db.insert("creditWeeks", { orgId: worker.orgId, workerId: worker._id, week, ...days.reduce(sum, NOTHING) });
}

/** The org's workers who gave most CPU time in this week, most first. */
export async function topOfWeek(ctx: QueryCtx, orgId: Id<"orgs">, week: number, count: number): Promise<Doc<"creditWeeks">[]> {
  return await ctx.db
    .query("creditWeeks")
    .withIndex("by_org_week_cpu", (q) => q.eq("orgId", orgId).eq("week", week))
    .order("desc")
    .take(count);
}

/** A worker's week rows (a deleted worker's, which go or pass to its successor). */
export async function weeksOf(ctx: QueryCtx, workerId: Id<"workers">, limit: number): Promise<Doc<"creditWeeks">[]> {
  return await ctx.db
    .query("creditWeeks")
    .withIndex("by_worker_week", (q) => q.eq("workerId", workerId))
    .take(limit);
}

/** Week rows of weeks that began before this day (the retention sweep's). */
export async function weeksBefore(ctx: QueryCtx, day: number, limit: number): Promise<Doc<"creditWeeks">[]> {
  return await ctx.db
    .query("creditWeeks")
    .withIndex("by_week", (q) => q.lt("week", day))
    .take(limit);
}
