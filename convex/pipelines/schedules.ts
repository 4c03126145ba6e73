import { getDocumentSize } from "convex/values";
import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget, TX_BUDGET } from "../core/budget";
import { checkCron, nextTick, nextTicks } from "./cron";
import { fail } from "../core/errors";
import { valueBytes } from "../core/validate";

/**
 * What schedules:* and the console's consoleSchedules:* share: a schedule's listed view, its job spec (kept beside
 * it in scheduleBodies, so that every list reads small rows), and pausing, resuming and removing one (its armed tick
 * is a scheduled function of schedules:tick).
 */

const NEXT_SHOWN = 3;
/** Schedules the console lists at most (an org holds up to LIMITS.schedulesPerOrg): its `more` says there are others. */
export const CONSOLE_SCHEDULES_SHOWN = 50;

/** A job spec as a schedule keeps it: the queue's (queue/submit.ts JobSpec), of which a schedule reads its type only. */
type KeptSpec = { type: string };

/** A schedule's job type: on the row, or in the spec a row written before specs moved beside it carries. */
function typeOf(s: Doc<"schedules">): string {
  return s.type ?? (s.job as KeptSpec | undefined)?.type ?? "";
}

/** What a list costs to read for this row: its own size (a row of the old shape carries its whole spec). */
export function rowBytes(s: Doc<"schedules">): number {
  return getDocumentSize(s);
}

/** A schedule as the lists show it: its next ticks (from the armed one, none while paused) and its last run's job. */
export async function scheduleView(ctx: QueryCtx, s: Doc<"schedules">) {
  const last = s.lastJobId ? await ctx.db.get(s.lastJobId) : null;
  return {
    scheduleId: s._id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    overlap: s.overlap,
    type: typeOf(s),
    paused: s.paused,
    // why the farm paused it (its client key was revoked); null when it runs, or a user paused it
    pausedReason: s.pausedReason ?? null,
    nextRuns: s.paused || s.nextRunAt === undefined ? [] : [s.nextRunAt, ...nextTicks(checkCron(s.cron, s.timezone), s.nextRunAt, NEXT_SHOWN - 1)],
    lastRunAt: s.lastRunAt ?? null,
    lastJob: last ? { jobId: last._id, status: last.status } : null,
    lastSkippedAt: s.lastSkippedAt ?? null,
    // the last tick that could not submit its job (cleared by the next one that does)
    lastError: s.lastError ?? null,
    lastErrorCode: s.lastErrorCode ?? null,
    lastErrorAt: s.lastErrorAt ?? null,
    createdAt: s.createdAt,
  };
}

/** The job spec a tick submits. */
export async function jobSpecOf<Spec extends KeptSpec>(ctx: QueryCtx, s: Doc<"schedules">): Promise<Spec> {
  const body = await ctx.db
    .query("scheduleBodies")
    .withIndex("by_schedule", (q) => q.eq("scheduleId", s._id))
    .unique();
  if (body) return body.job as Spec;
  if (s.job === undefined) fail("not_found", `schedule ${JSON.stringify(s.name)} has no job spec`);
  return s.job as Spec;
}

/** Keep the schedule's job spec beside it; the fields of the row that say what it is. */
export async function saveJobSpec(ctx: MutationCtx, orgId: Id<"orgs">, scheduleId: Id<"schedules">, job: KeptSpec) {
  const bytes = valueBytes(job);
  await ctx.db.insert("scheduleBodies", { orgId, scheduleId, job, bytes });
  return { type: job.type, jobBytes: bytes };
}

/** Cancel the schedule's armed tick, unless it is the one running now. */
async function cancelTick(ctx: MutationCtx, schedule: Doc<"schedules">) {
  if (!schedule.tick) return;
  const fn = await ctx.db.system.get(schedule.tick);
  if (fn?.state.kind === "pending") await ctx.scheduler.cancel(schedule.tick);
}

/** Arm the schedule's next tick after `after` (none when the line never fires again). */
export async function armSchedule(ctx: MutationCtx, schedule: Doc<"schedules">, after: number) {
  const next = nextTick(checkCron(schedule.cron, schedule.timezone), after);
  await cancelTick(ctx, schedule);
  const tick = next === null ? undefined : await ctx.scheduler.runAt(next, internal.schedules.tick, { scheduleId: schedule._id, at: next });
  await ctx.db.patch(schedule._id, { nextRunAt: next ?? undefined, tick });
}

/** Pause: no tick runs until resumed. `reason`: the farm paused it (shown with it), not a user. */
export async function pauseSchedule(ctx: MutationCtx, schedule: Doc<"schedules">, reason?: string) {
  await cancelTick(ctx, schedule);
  await ctx.db.patch(schedule._id, { paused: true, tick: undefined, nextRunAt: undefined, ...(reason !== undefined ? { pausedReason: reason } : {}) });
  return { paused: true as const };
}

/** Why the schedule's client key can no longer submit (revoked, or deleted), or null; an operator's schedule has none. */
export async function clientKeyProblem(ctx: QueryCtx, schedule: Doc<"schedules">): Promise<string | null> {
  if (!schedule.clientKeyId) return null;
  const key = await ctx.db.get(schedule.clientKeyId);
  if (!key) return "its client key was deleted";
  return key.revoked ? `its client key “${key.name}” (${key.keyPrefix}…) was revoked` : null;
}

/** Resume from now: ticks missed while paused do not run. A schedule whose client key was revoked cannot run again. */
export async function resumeSchedule(ctx: MutationCtx, schedule: Doc<"schedules">) {
  if (!schedule.paused) return { paused: false as const, nextRunAt: schedule.nextRunAt ?? null };
  const problem = await clientKeyProblem(ctx, schedule);
  if (problem) fail("invalid_argument", `Schedule ${JSON.stringify(schedule.name)} cannot run again: ${problem}; remove it and create it again with a live key`);
  await ctx.db.patch(schedule._id, { paused: false, pausedReason: undefined });
  await armSchedule(ctx, { ...schedule, paused: false }, Date.now());
  return { paused: false as const, nextRunAt: (await ctx.db.get(schedule._id))!.nextRunAt ?? null };
}

/** Remove a schedule with its job spec; jobs it submitted stay. */
export async function removeSchedule(ctx: MutationCtx, schedule: Doc<"schedules">) {
  await cancelTick(ctx, schedule);
  const body = await ctx.db
    .query("scheduleBodies")
    .withIndex("by_schedule", (q) => q.eq("scheduleId", schedule._id))
    .unique();
  if (body) await ctx.db.delete(body._id);
  await ctx.db.delete(schedule._id);
  return { removed: true as const };
}

/**
 * A client key was revoked: its schedules pause, saying why (at most LIMITS.schedulesPerOrg: one org's). Rows of the
 * old shape, carrying their job specs, are read within a byte budget: one left over pauses itself at its next tick.
 */
export async function pauseSchedulesOfKey(ctx: MutationCtx, key: Doc<"clientKeys">, perOrg: number): Promise<number> {
  const { rows } = await takeWithinBudget(
    ctx.db.query("schedules").withIndex("by_client", (q) => q.eq("clientKeyId", key._id)),
    perOrg,
    new ByteBudget(TX_BUDGET.rangeReadBytes / 2),
  );
  const reason = `its client key “${key.name}” (${key.keyPrefix}…) was revoked`;
  for (const row of rows) await pauseSchedule(ctx, row, reason);
  return rows.length;
}
