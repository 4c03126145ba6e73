import { internal } from "../_generated/api";
import type { Doc } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { checkCron, nextTick, nextTicks } from "./cron";
import type { JobSpec } from "./submit";

/**
 * What schedules:* and the console's consoleSchedules:* share: a schedule's listed view, and pausing, resuming and
 * removing one (its armed tick is a scheduled function of schedules:tick).
 */

const NEXT_SHOWN = 3;
/** Schedules the console lists at most (an org holds up to LIMITS.schedulesPerOrg): its `more` says there are others. */
export const CONSOLE_SCHEDULES_SHOWN = 50;

/** A schedule as the lists show it: its next ticks (from the armed one, none while paused) and its last run's job. */
export async function scheduleView(ctx: QueryCtx, s: Doc<"schedules">) {
  const last = s.lastJobId ? await ctx.db.get(s.lastJobId) : null;
  return {
    scheduleId: s._id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    overlap: s.overlap,
    type: (s.job as JobSpec).type,
    paused: s.paused,
    nextRuns: s.paused || s.nextRunAt === undefined ? [] : [s.nextRunAt, ...nextTicks(checkCron(s.cron, s.timezone), s.nextRunAt, NEXT_SHOWN - 1)],
    lastRunAt: s.lastRunAt ?? null,
    lastJob: last ? { jobId: last._id, status: last.status } : null,
    lastSkippedAt: s.lastSkippedAt ?? null,
    createdAt: s.createdAt,
  };
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

export async function pauseSchedule(ctx: MutationCtx, schedule: Doc<"schedules">) {
  await cancelTick(ctx, schedule);
  await ctx.db.patch(schedule._id, { paused: true, tick: undefined, nextRunAt: undefined });
  return { paused: true as const };
}

/** Resume from now: ticks missed while paused do not run. */
export async function resumeSchedule(ctx: MutationCtx, schedule: Doc<"schedules">) {
  if (!schedule.paused) return { paused: false as const, nextRunAt: schedule.nextRunAt ?? null };
  await ctx.db.patch(schedule._id, { paused: false });
  await armSchedule(ctx, { ...schedule, paused: false }, Date.now());
  return { paused: false as const, nextRunAt: (await ctx.db.get(schedule._id))!.nextRunAt ?? null };
}

/** Remove a schedule; jobs it submitted stay. */
export async function removeSchedule(ctx: MutationCtx, schedule: Doc<"schedules">) {
  await cancelTick(ctx, schedule);
  await ctx.db.delete(schedule._id);
  return { removed: true as const };
}
