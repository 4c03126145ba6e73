import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { added, NOTHING, sum, ZERO, type Credit, type Given, type Outcome } from "./creditSums";
import { addWeekCredit, topOfWeek } from "./creditWeeks";
import { LIMITS } from "../core/limits";
import { checkIntegerInRange } from "../core/validate";

/**
 * Donor credit: the CPU time each finished attempt used, as its worker reported it (`cpuMs` on
 * workers:complete / workers:fail), clamped to what the machine could have spent in the attempt's wall
 * time. An attempt whose CPU could not be measured (an Ollama request runs inside another program) is
 * credited by its wall time and counted apart (`wallMs`). Totals per worker per UTC day, plus one
 * all-time row per worker; both are the worker's own rows, so finishing jobs on different machines never
 * conflict.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Whole UTC days since the epoch. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The UTC day the week of `ms` starts on: weeks start Monday 00:00 UTC (1970-01-01 was a Thursday). */
export function weekStartDay(ms: number): number {
  const day = utcDay(ms);
  return day - ((day + 3) % 7);
}

/**
 * How many cores the worker's CPU time is clamped by: its machine's, as its hardware facts report them (for a
 * worker that has not reported them, an older engine, its enrollment's slot count stands in: it never runs more
 * job processes than that at once), never more than its enrollment grants (`maxCores`, default 256): the facts
 * are the worker's own word.
 */
export function coresOf(worker: Pick<Doc<"workers">, "facts" | "maxConcurrentJobs" | "maxCores">): number {
  const reported = worker.facts?.cores;
  const cores = reported !== undefined && Number.isInteger(reported) && reported >= 1 ? reported : Math.max(1, worker.maxConcurrentJobs);
  return Math.min(cores, worker.maxCores ?? LIMITS.defaultMaxCores);
}

export function checkCpuMs(cpuMs: number | undefined): number | undefined {
  return cpuMs === undefined ? undefined : checkIntegerInRange(cpuMs, "cpuMs", 0, LIMITS.cpuMsMax);
}


/**
 * What one attempt is credited: its CPU time clamped to wall time × cores, else its wall time; a job with a
 * time limit (an app's timeoutMs) is credited at most that limit × cores. `cores`: the worker's (coresOf); a
 * failed attempt is clamped to one.
 */
export function creditFor(job: Doc<"jobs">, worker: Doc<"workers">, cpuMs: number | undefined, now: number, cores: number = coresOf(worker)): Credit {
  const wallMs = Math.max(0, now - (job.startedAt ?? now));
  const cap = job.app ? job.app.timeoutMs * cores : Infinity;
  if (cpuMs === undefined) return { cpuMs: Math.min(wallMs, cap), measured: false };
  return { cpuMs: Math.min(cpuMs, wallMs * cores, cap), measured: true };
}

/**
 * Credit the attempt the worker just ended (in the mutation that ends it): marks the job and adds to the
 * worker's day and all-time rows. `completed`: workers:complete (a job done, canceled or not); `failed`: at most
 * its wall time × 1 core (a failure proves nothing was computed).
 */
export async function creditAttempt(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  cpuMs: number | undefined,
  outcome: "completed" | "failed",
): Promise<Credit> {
  const now = Date.now();
  const credit = creditFor(job, worker, cpuMs, now, outcome === "failed" ? 1 : coresOf(worker));
  await ctx.db.patch(job._id, { cpuMs: credit.cpuMs, cpuMeasured: credit.measured });
  await addCredit(ctx, worker, credit, outcome, now);
  return credit;
}

/** Add credit to the worker's day, week and all-time rows (a replicated job's instance: once its result is valid). */
export async function addCredit(
  ctx: MutationCtx,
  worker: Pick<Doc<"workers">, "_id" | "orgId">,
  credit: Credit,
  outcome: Outcome,
  now: number,
): Promise<void> {
  const day = utcDay(now);
  const dayRow = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", worker._id).eq("day", day))
    .unique();
  if (dayRow) await ctx.db.patch(dayRow._id, added(dayRow, credit, outcome));
  else await ctx.db.insert("creditDays", { orgId: worker.orgId, workerId: worker._id, day, ...added(ZERO, credit, outcome) });
  const total = await creditTotalOf(ctx, worker._id);
  if (total) await ctx.db.patch(total._id, added(total, credit, outcome));
  else await ctx.db.insert("creditTotals", { orgId: worker.orgId, workerId: worker._id, ...added(ZERO, credit, outcome) });
  await addWeekCredit(ctx, worker, weekStartDay(now), credit, outcome);
}

/**
 * Move a worker's pending credit (replicated results waiting for their quorum, trust/instanceCredit.ts) by `cpuMs`
 * and `jobs`: kept on its all-time row, so its sum is exact however many wait.
 */
export async function addPendingCredit(ctx: MutationCtx, worker: Pick<Doc<"workers">, "_id" | "orgId">, cpuMs: number, jobs: number): Promise<void> {
  const total = await creditTotalOf(ctx, worker._id);
  // rows from before the sum existed may settle results it never counted: it never goes below nothing
  const pending = { pendingCpuMs: Math.max(0, (total?.pendingCpuMs ?? 0) + cpuMs), pendingJobs: Math.max(0, (total?.pendingJobs ?? 0) + jobs) };
  if (total) await ctx.db.patch(total._id, pending);
  else await ctx.db.insert("creditTotals", { orgId: worker.orgId, workerId: worker._id, ...ZERO, ...pending });
}

export async function creditTotalOf(ctx: QueryCtx, workerId: Id<"workers">): Promise<Doc<"creditTotals"> | null> {
  return await ctx.db
    .query("creditTotals")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .unique();
}

/** One worker's credit (and energy given) this week (UTC, from Monday): at most 7 rows. */
export async function weekCreditOf(ctx: QueryCtx, workerId: Id<"workers">, now: number): Promise<Given> {
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", workerId).gte("day", weekStartDay(now)).lte("day", utcDay(now)))
    .take(7);
  return rows.reduce(sum, NOTHING);
}

/** The workers who gave most CPU time in the week `now` is in, most first (exact however many gave). */
export async function topWeekCredit(ctx: QueryCtx, orgId: Id<"orgs">, now: number, count: number): Promise<Map<Id<"workers">, Given>> {
  const rows = await topOfWeek(ctx, orgId, weekStartDay(now), count);
  return new Map(rows.map((r) => [r.workerId, sum(NOTHING, r)]));
}

/** Every worker's credit (and energy given) this week, summed from the org's day rows (at most 7 per listed worker). */
export async function orgWeekCredit(ctx: QueryCtx, orgId: Id<"orgs">, now: number): Promise<Map<Id<"workers">, Given>> {
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_org_day", (q) => q.eq("orgId", orgId).gte("day", weekStartDay(now)))
    .take(7 * LIMITS.workersListed);
  const byWorker = new Map<Id<"workers">, Given>();
  for (const r of rows) {
    byWorker.set(r.workerId, sum(byWorker.get(r.workerId) ?? NOTHING, r));
  }
  return byWorker;
}

type DayCredit = { workerId: Id<"workers">; day: number; cpuMs: number; jobs: number; energyJ?: number };

/**
 * The org's credit per worker per UTC day of the week `now` is in, for the summary: donor views read their line
 * from the throttled summary instead of a subscription that re-runs on every job they end. `complete`: every
 * worker's days are there (at most 7 per listed worker are read); else a donor reads its own (daysOfWeek).
 */
export async function weekCreditDays(ctx: QueryCtx, orgId: Id<"orgs">, now: number): Promise<{ days: DayCredit[]; complete: boolean }> {
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_org_day", (q) => q.eq("orgId", orgId).gte("day", weekStartDay(now)))
    .take(7 * LIMITS.workersListed + 1);
  const complete = rows.length <= 7 * LIMITS.workersListed;
  return { days: rows.slice(0, 7 * LIMITS.workersListed).map(dayCredit), complete };
}

/** One worker's credit per UTC day of the week `now` is in (at most 7 rows). */
export async function daysOfWeek(ctx: QueryCtx, workerId: Id<"workers">, now: number): Promise<DayCredit[]> {
  const week = weekStartDay(now);
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", workerId).gte("day", week).lt("day", week + 7))
    .take(7);
  return rows.map(dayCredit);
}

function dayCredit(r: Doc<"creditDays">): DayCredit {
  return { workerId: r.workerId, day: r.day, cpuMs: r.cpuMs, jobs: r.jobs, ...(r.energyJ ? { energyJ: r.energyJ } : {}) };
}
