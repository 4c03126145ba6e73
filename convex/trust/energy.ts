import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { bumpTypeEnergy } from "../lanes/entry";
import { coresOf, creditTotalOf, utcDay, weekStartDay } from "./credit";
import { addWeekEnergy } from "./creditWeeks";
import { fail } from "../core/errors";

/**
 * Energy given: the joules an attempt used, as its worker reports it with the attempt's end (`energyJ` on
 * workers:complete / workers:fail): measured where the machine's CPU package counter (RAPL) can be read, else
 * estimated from the CPU time. Kept beside the credit, in the worker's own day and all-time rows (no conflict between
 * machines), and per job type through the counter deltas the summariser folds (typeEnergy). An attempt's energy
 * counts whether or not its result is accepted: it was spent either way.
 */

/** A sanity cap on one report (a year of a 32-core machine at full power is under 1e11 J). */
export const ENERGY_J_MAX = 1e12;
/** What one core may draw at most, for the clamp: above any desktop or server core's share of its package power. */
const WATTS_PER_CORE_MAX = 60;

export function checkEnergyJ(energyJ: number | undefined): number | undefined {
  if (energyJ === undefined) return undefined;
  if (!Number.isFinite(energyJ) || energyJ < 0 || energyJ > ENERGY_J_MAX) {
    fail("invalid_argument", `energyJ must be a number of joules from 0 to ${ENERGY_J_MAX}, got ${energyJ}`);
  }
  return energyJ;
}

/** At most what the machine's cores could draw over the attempt's wall time. */
export function clampEnergy(energyJ: number, wallMs: number, cores: number): number {
  return Math.min(energyJ, (Math.max(0, wallMs) / 1000) * cores * WATTS_PER_CORE_MAX);
}

/**
 * Add an attempt's energy (clamped) to its worker's day, week and all-time rows and to its job type's total. `startedAt`:
 * when the attempt (or the replicated job's instance) started. Nothing is written for no report or nothing used.
 */
export async function recordEnergy(
  ctx: MutationCtx,
  worker: Doc<"workers">,
  attempt: { type: string; startedAt?: number },
  energyJ: number | undefined,
  now: number,
): Promise<void> {
  if (energyJ === undefined) return;
  const joules = clampEnergy(energyJ, now - (attempt.startedAt ?? now), coresOf(worker));
  if (joules <= 0) return;
  const day = utcDay(now);
  const dayRow = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", worker._id).eq("day", day))
    .unique();
  if (dayRow) await ctx.db.patch(dayRow._id, { energyJ: (dayRow.energyJ ?? 0) + joules });
  else await ctx.db.insert("creditDays", { orgId: worker.orgId, workerId: worker._id, day, ...NOTHING_CREDITED, energyJ: joules });
  const total = await creditTotalOf(ctx, worker._id);
  if (total) await ctx.db.patch(total._id, { energyJ: (total.energyJ ?? 0) + joules });
  else await ctx.db.insert("creditTotals", { orgId: worker.orgId, workerId: worker._id, ...NOTHING_CREDITED, energyJ: joules });
  await addWeekEnergy(ctx, worker, weekStartDay(now), joules);
  await bumpTypeEnergy(ctx, worker.orgId, attempt.type, joules);
}

const NOTHING_CREDITED = { cpuMs: 0, wallMs: 0, jobs: 0, failed: 0 };

/** The org's job types by the energy given to them, most first (all time). */
export async function energyByType(ctx: QueryCtx, orgId: Id<"orgs">, limit: number) {
  const rows = await ctx.db
    .query("typeEnergy")
    .withIndex("by_org_energy", (q) => q.eq("orgId", orgId))
    .order("desc")
    .take(limit);
  return rows.map((r) => ({ type: r.type, energyJ: r.energyJ, reports: r.reports }));
}
