import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { LIMITS } from "./limits";
import { checkIntegerInRange } from "./validate";

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
 * How many cores the worker's machine has: its reported hardware facts; for a worker that has not reported
 * them (an older engine), its enrollment's slot count stands in: it never runs more job processes than that
 * at once, so it never burns more CPU than that many cores' worth.
 */
export function coresOf(worker: Pick<Doc<"workers">, "facts" | "maxConcurrentJobs">): number {
  const cores = worker.facts?.cores;
  if (cores !== undefined && Number.isInteger(cores) && cores >= 1) return cores;
  return Math.max(1, worker.maxConcurrentJobs);
}

export function checkCpuMs(cpuMs: number | undefined): number | undefined {
  return cpuMs === undefined ? undefined : checkIntegerInRange(cpuMs, "cpuMs", 0, LIMITS.cpuMsMax);
}

export type Credit = { cpuMs: number; measured: boolean };

/**
 * What one attempt is credited: its CPU time clamped to wall time × cores, else its wall time; a job with a
 * time limit (an app's timeoutMs) is credited at most that limit × cores.
 */
export function creditFor(job: Doc<"jobs">, worker: Doc<"workers">, cpuMs: number | undefined, now: number): Credit {
  const wallMs = Math.max(0, now - (job.startedAt ?? now));
  const cap = job.app ? job.app.timeoutMs * coresOf(worker) : Infinity;
  if (cpuMs === undefined) return { cpuMs: Math.min(wallMs, cap), measured: false };
  return { cpuMs: Math.min(cpuMs, wallMs * coresOf(worker), cap), measured: true };
}

type Totals = { cpuMs: number; wallMs: number; jobs: number; failed: number; canceledAtQuorum: number };

/**
 * How an attempt ended, for the counts beside the CPU time: `completed` (workers:complete), `failed`
 * (workers:fail), or `canceledAtQuorum`: an instance of a replicated job canceled because the others agreed,
 * which is no failure of its donor.
 */
export type Outcome = "completed" | "failed" | "canceledAtQuorum";

function added(row: Pick<Doc<"creditTotals">, "cpuMs" | "wallMs" | "jobs" | "failed" | "canceledAtQuorum">, credit: Credit, outcome: Outcome): Totals {
  return {
    cpuMs: row.cpuMs + credit.cpuMs,
    wallMs: row.wallMs + (credit.measured ? 0 : credit.cpuMs),
    jobs: row.jobs + (outcome === "completed" ? 1 : 0),
    failed: row.failed + (outcome === "failed" ? 1 : 0),
    canceledAtQuorum: (row.canceledAtQuorum ?? 0) + (outcome === "canceledAtQuorum" ? 1 : 0),
  };
}

const ZERO: Totals = { cpuMs: 0, wallMs: 0, jobs: 0, failed: 0, canceledAtQuorum: 0 };

/** What day rows add up to when read: the credit, and the energy its attempts used (lib/energy.ts writes it). */
type Given = Totals & { energyJ: number };

function sum(a: Given, r: Pick<Doc<"creditDays">, "cpuMs" | "wallMs" | "jobs" | "failed" | "canceledAtQuorum" | "energyJ">): Given {
  return {
    cpuMs: a.cpuMs + r.cpuMs,
    wallMs: a.wallMs + r.wallMs,
    jobs: a.jobs + r.jobs,
    failed: a.failed + r.failed,
    canceledAtQuorum: a.canceledAtQuorum + (r.canceledAtQuorum ?? 0),
    energyJ: a.energyJ + (r.energyJ ?? 0),
  };
}

/**
 * Credit the attempt the worker just ended (in the mutation that ends it): marks the job and adds to the
 * worker's day and all-time rows. `completed`: workers:complete (a job done, canceled or not); `failed`.
 */
export async function creditAttempt(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  cpuMs: number | undefined,
  outcome: "completed" | "failed",
): Promise<Credit> {
  const now = Date.now();
  const credit = creditFor(job, worker, cpuMs, now);
  await ctx.db.patch(job._id, { cpuMs: credit.cpuMs, cpuMeasured: credit.measured });
  await addCredit(ctx, worker, credit, outcome, now);
  return credit;
}

/** Add credit to the worker's day and all-time rows (a replicated job's instance: once its result is valid). */
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
  return rows.reduce(sum, { ...ZERO, energyJ: 0 });
}

/** Every worker's credit (and energy given) this week, summed from the org's day rows (at most 7 per listed worker). */
export async function orgWeekCredit(ctx: QueryCtx, orgId: Id<"orgs">, now: number): Promise<Map<Id<"workers">, Given>> {
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_org_day", (q) => q.eq("orgId", orgId).gte("day", weekStartDay(now)))
    .take(7 * LIMITS.workersListed);
  const byWorker = new Map<Id<"workers">, Given>();
  for (const r of rows) {
    byWorker.set(r.workerId, sum(byWorker.get(r.workerId) ?? { ...ZERO, energyJ: 0 }, r));
  }
  return byWorker;
}

/**
 * The org's credit per worker per UTC day of the week `now` is in, for the summary: donor views read their line
 * from the throttled summary instead of a subscription that re-runs on every job they end.
 */
export async function weekCreditDays(
  ctx: QueryCtx,
  orgId: Id<"orgs">,
  now: number,
): Promise<Array<{ workerId: Id<"workers">; day: number; cpuMs: number; jobs: number; energyJ?: number }>> {
  const rows = await ctx.db
    .query("creditDays")
    .withIndex("by_org_day", (q) => q.eq("orgId", orgId).gte("day", weekStartDay(now)))
    .take(7 * LIMITS.workersListed);
  return rows.map((r) => ({ workerId: r.workerId, day: r.day, cpuMs: r.cpuMs, jobs: r.jobs, ...(r.energyJ ? { energyJ: r.energyJ } : {}) }));
}
