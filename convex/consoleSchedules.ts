import { v } from "convex/values";
import type { Doc, Id } from "./_generated/dataModel";
import { mutation, query, type QueryCtx } from "./_generated/server";
import { operatorFromKey } from "./access/auth";
import { ByteBudget, takeWithinBudget, TX_BUDGET } from "./core/budget";
import { fail } from "./core/errors";
import { CONSOLE_SCHEDULES_SHOWN as SHOWN, pauseSchedule, removeSchedule, resumeSchedule, scheduleView } from "./pipelines/schedules";

/**
 * The console's Schedules page: the org's schedules (the first ones by name) with their next ticks and their last
 * run's job, and pause, resume and remove by id. Every function takes an operator key as `apiKey` (or the key of
 * a worker enrolled with canManage), as the other console functions do. The list reads no clock: its next runs
 * come from the armed tick, so the subscription changes only when a schedule does.
 */

export const list = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await operatorFromKey(ctx, apiKey);
    // rows of the old shape carry their job spec: a byte budget may end the page early (`more` then)
    const { rows, cut } = await takeWithinBudget(
      ctx.db.query("schedules").withIndex("by_org_name", (q) => q.eq("orgId", me.orgId)),
      SHOWN + 1,
      new ByteBudget(TX_BUDGET.rangeReadBytes),
    );
    return { schedules: await Promise.all(rows.slice(0, SHOWN).map((s) => scheduleView(ctx, s))), more: rows.length > SHOWN || cut };
  },
});

/** The org's schedule of that id; another org's, or none, is not_found. */
async function scheduleInOrg(ctx: QueryCtx, orgId: Id<"orgs">, scheduleId: string): Promise<Doc<"schedules">> {
  const id = ctx.db.normalizeId("schedules", scheduleId);
  const row = id ? await ctx.db.get(id) : null;
  if (!row || row.orgId !== orgId) fail("not_found", "No such schedule (it may have been removed)");
  return row;
}

export const pause = mutation({
  args: { apiKey: v.string(), scheduleId: v.string() },
  handler: async (ctx, { apiKey, scheduleId }) => await pauseSchedule(ctx, await scheduleInOrg(ctx, (await operatorFromKey(ctx, apiKey)).orgId, scheduleId)),
});

/** Resume from now: ticks missed while paused do not run. */
export const resume = mutation({
  args: { apiKey: v.string(), scheduleId: v.string() },
  handler: async (ctx, { apiKey, scheduleId }) => await resumeSchedule(ctx, await scheduleInOrg(ctx, (await operatorFromKey(ctx, apiKey)).orgId, scheduleId)),
});

/** Remove a schedule; the jobs it submitted stay. */
export const remove = mutation({
  args: { apiKey: v.string(), scheduleId: v.string() },
  handler: async (ctx, { apiKey, scheduleId }) => await removeSchedule(ctx, await scheduleInOrg(ctx, (await operatorFromKey(ctx, apiKey)).orgId, scheduleId)),
});
