import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc, Id } from "./_generated/dataModel";
import { internalMutation, mutation, query, type MutationCtx, type QueryCtx } from "./_generated/server";
import { clientFromKey, operatorFromKey } from "./access/auth";
import { ByteBudget, takeWithinBudget, TX_BUDGET } from "./core/budget";
import { checkCron } from "./pipelines/cron";
import { fail } from "./core/errors";
import { looksLikeSecret } from "./access/keys";
import { LIMITS } from "./core/limits";
import { armSchedule, clientKeyProblem, jobSpecOf, pauseSchedule, removeSchedule, resumeSchedule, rowBytes, saveJobSpec, scheduleView } from "./pipelines/schedules";
import { checkJobSpec, insertCheckedJob, jobSpec, type JobSpec } from "./queue/submit";
import { checkText } from "./core/validate";

/**
 * Schedules: a cron line (5 fields, in a time zone) that submits a job at each tick. One scheduled function per
 * schedule (its next tick); a tick that comes late (the deployment was down) runs once and the next is counted
 * from now, so missed ticks run once, not once each. With overlap "skip", a tick is skipped while the job of the
 * schedule's last run has not ended. Every function takes a client key (fh_c_…) or an operator key (fh_o_…). A tick
 * submits in a sub-transaction (schedules:submitTick): a refusal rolls back everything it wrote and is recorded on the
 * schedule (lastError, lastErrorAt). A schedule whose client key is revoked pauses, saying why.
 */

const FINAL: ReadonlySet<string> = new Set(["succeeded", "canceled", "dead"]);

type Caller = { orgId: Id<"orgs">; clientKeyId?: Id<"clientKeys"> };

async function callerOf(ctx: QueryCtx, key: string): Promise<Caller> {
  if (looksLikeSecret("fh_o_", key)) return { orgId: (await operatorFromKey(ctx, key)).orgId };
  const client = await clientFromKey(ctx, key);
  return { orgId: client.orgId, clientKeyId: client._id };
}

async function scheduleOf(ctx: QueryCtx, caller: Caller, name: string): Promise<Doc<"schedules">> {
  const row = await ctx.db
    .query("schedules")
    .withIndex("by_org_name", (q) => q.eq("orgId", caller.orgId).eq("name", checkText(name, "name", LIMITS.nameChars)))
    .unique();
  if (!row) fail("not_found", `No schedule named ${JSON.stringify(name.slice(0, 80))}`);
  return row;
}

export const create = mutation({
  args: {
    clientKey: v.string(),
    name: v.string(),
    cron: v.string(),
    timezone: v.optional(v.string()),
    overlap: v.optional(v.union(v.literal("skip"), v.literal("allow"))),
    job: jobSpec,
  },
  handler: async (ctx, args) => {
    const caller = await callerOf(ctx, args.clientKey);
    const name = checkText(args.name, "name", LIMITS.nameChars);
    const timezone = args.timezone ?? "UTC";
    checkCron(args.cron, timezone);
    const now = Date.now();
    checkJobSpec(args.job, now);
    if (args.job.externalId !== undefined) fail("invalid_argument", "job.externalId: each run submits a new job, so a schedule's job cannot name one");
    if (args.job.runAt !== undefined) fail("invalid_argument", "job.runAt: a schedule's job runs at its ticks (delayMs may delay each)");
    const existing = await ctx.db.query("schedules").withIndex("by_org_name", (q) => q.eq("orgId", caller.orgId).eq("name", name)).unique();
    if (existing) fail("invalid_argument", `A schedule named ${JSON.stringify(name)} exists; remove it first`);
    const { rows: counted, cut } = await takeWithinBudget(
      ctx.db.query("schedules").withIndex("by_org_name", (q) => q.eq("orgId", caller.orgId)),
      LIMITS.schedulesPerOrg,
      new ByteBudget(TX_BUDGET.rangeReadBytes),
    );
    // only rows of the old shape (each carrying its job spec) fill the budget first
    if (cut) fail("too_large", "This org's schedules carry their job specs on their rows: run migrations:moveScheduleBodies first");
    if (counted.length >= LIMITS.schedulesPerOrg) fail("too_large", `An org has at most ${LIMITS.schedulesPerOrg} schedules`);
    const scheduleId = await ctx.db.insert("schedules", {
      orgId: caller.orgId,
      name,
      cron: args.cron.trim().split(/\s+/).join(" "),
      timezone,
      overlap: args.overlap ?? "skip",
      paused: false,
      createdAt: now,
      ...(caller.clientKeyId ? { clientKeyId: caller.clientKeyId } : {}),
    });
    await ctx.db.patch(scheduleId, await saveJobSpec(ctx, caller.orgId, scheduleId, args.job));
    await armSchedule(ctx, (await ctx.db.get(scheduleId))!, now);
    return { scheduleId, nextRunAt: (await ctx.db.get(scheduleId))!.nextRunAt ?? null };
  },
});

/**
 * The org's schedules, by name, with their next ticks and their last run's job. Rows of the old shape (their job
 * spec on the row, until migrations:moveScheduleBodies) are read within a byte budget: the list may stop early.
 */
export const list = query({
  args: { clientKey: v.string() },
  handler: async (ctx, args) => {
    const caller = await callerOf(ctx, args.clientKey);
    const { rows } = await takeWithinBudget(
      ctx.db.query("schedules").withIndex("by_org_name", (q) => q.eq("orgId", caller.orgId)),
      LIMITS.schedulesPerOrg,
      new ByteBudget(TX_BUDGET.rangeReadBytes),
    );
    return await Promise.all(rows.map((s) => scheduleView(ctx, s)));
  },
});

export const pause = mutation({
  args: { clientKey: v.string(), name: v.string() },
  handler: async (ctx, args) => await pauseSchedule(ctx, await scheduleOf(ctx, await callerOf(ctx, args.clientKey), args.name)),
});

/** Resume from now: ticks missed while paused do not run. */
export const resume = mutation({
  args: { clientKey: v.string(), name: v.string() },
  handler: async (ctx, args) => await resumeSchedule(ctx, await scheduleOf(ctx, await callerOf(ctx, args.clientKey), args.name)),
});

/** Remove a schedule; jobs it submitted stay. */
export const remove = mutation({
  args: { clientKey: v.string(), name: v.string() },
  handler: async (ctx, args) => await removeSchedule(ctx, await scheduleOf(ctx, await callerOf(ctx, args.clientKey), args.name)),
});

/** One tick: submit the job (or skip it while the last run's job runs, with overlap "skip"), then arm the next. */
export const tick = internalMutation({
  args: { scheduleId: v.id("schedules"), at: v.number() },
  handler: async (ctx, args) => {
    const schedule = await ctx.db.get(args.scheduleId);
    // removed, paused, or re-armed since this tick was scheduled
    if (!schedule || schedule.paused || schedule.nextRunAt !== args.at) return;
    await runTick(ctx, schedule);
  },
});

async function runTick(ctx: MutationCtx, schedule: Doc<"schedules">) {
  const now = Date.now();
  const problem = await clientKeyProblem(ctx, schedule);
  if (problem) {
    // revoked while this tick was armed (or by an older version, which did not pause): it stops, saying why
    await pauseSchedule(ctx, schedule, problem);
    return;
  }
  const last = schedule.lastJobId ? await ctx.db.get(schedule.lastJobId) : null;
  if (schedule.overlap === "skip" && last && !FINAL.has(last.status)) {
    await ctx.db.patch(schedule._id, { lastSkippedAt: now });
  } else {
    try {
      const jobId = await ctx.runMutation(internal.schedules.submitTick, { scheduleId: schedule._id });
      await ctx.db.patch(schedule._id, { lastRunAt: now, lastJobId: jobId, lastError: undefined, lastErrorCode: undefined, lastErrorAt: undefined });
    } catch (error) {
      // a job the org can no longer submit (an app since deleted): nothing of it was written; the next tick tries again
      const { code, message } = refusalOf(error);
      await ctx.db.patch(schedule._id, { lastRunAt: now, lastError: message.slice(0, LIMITS.summaryErrorChars), lastErrorCode: code, lastErrorAt: now });
      console.warn(`schedule ${schedule._id} (${JSON.stringify(schedule.name)}): its tick could not submit its job: ${code}: ${message.slice(0, 200)}`);
    }
  }
  // counted from now: ticks missed while the deployment was down run once (this one), not once each
  await armSchedule(ctx, schedule, now);
}

/** A refusal's stable code and message (a ConvexError of core/errors.ts), or "error" and the text of anything else. */
function refusalOf(error: unknown): { code: string; message: string } {
  let data = (error as { data?: unknown }).data;
  if (typeof data === "string") {
    try {
      data = JSON.parse(data) as unknown;
    } catch {
      // not JSON: a plain message
    }
  }
  const { code, message } = (typeof data === "object" && data !== null ? data : {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && typeof message === "string") return { code, message };
  return { code: "error", message: error instanceof Error ? error.message : String(error) };
}

/**
 * A tick's submit, run by runTick as a sub-transaction (ctx.runMutation): when it throws, every write it made is rolled
 * back and the tick records why. Returns the submitted job's id.
 */
export const submitTick = internalMutation({
  args: { scheduleId: v.id("schedules") },
  handler: async (ctx, { scheduleId }): Promise<Id<"jobs">> => {
    const schedule = await ctx.db.get(scheduleId);
    if (!schedule) fail("not_found", "the schedule was removed");
    const spec = checkJobSpec(await jobSpecOf<JobSpec>(ctx, schedule), Date.now());
    return await insertCheckedJob(ctx, schedule.orgId, spec, schedule.clientKeyId, { scheduleId });
  },
});

/** Overdue schedules one catch-up runs, and the job specs it may read and submit (each up to 256 KiB) doing so. */
const CATCH_UP_ROWS = 50;
const CATCH_UP_BYTES = 2 * 1024 * 1024;

/**
 * The cron's catch-up: a schedule whose tick is overdue by more than a minute (its scheduled function was lost) runs
 * once now, CATCH_UP_ROWS schedules and CATCH_UP_BYTES of job specs per transaction; the rest in a scheduled run.
 */
export const catchUp = internalMutation({
  args: {},
  handler: async (ctx) => {
    const now = Date.now();
    // rows of the old shape carry their specs: the rows read are budgeted too
    const { rows: overdue, cut } = await takeWithinBudget(
      ctx.db.query("schedules").withIndex("by_next", (q) => q.eq("paused", false).gt("nextRunAt", 0).lt("nextRunAt", now - 60_000)),
      CATCH_UP_ROWS,
      new ByteBudget(CATCH_UP_BYTES),
    );
    const bytes = new ByteBudget(CATCH_UP_BYTES);
    let ran = 0;
    for (const schedule of overdue) {
      if (ran > 0 && bytes.used + (schedule.jobBytes ?? rowBytes(schedule)) > CATCH_UP_BYTES) break;
      // read once by the tick and written again as the job's payload
      bytes.spend(schedule.jobBytes ?? rowBytes(schedule));
      await runTick(ctx, schedule);
      ran++;
    }
    if (cut || ran < overdue.length || overdue.length === CATCH_UP_ROWS) await ctx.scheduler.runAfter(0, internal.schedules.catchUp, {});
    return { ran };
  },
});
