import { internal } from "./_generated/api";
import { internalMutation, type MutationCtx } from "./_generated/server";
import { TIMING } from "./core/limits";
import { noteMetrics } from "./lanes/counters";
import { cancelIfPending } from "./lanes/scheduled";
import { rearmSettlement } from "./pipelines/settlements";
import { WEBHOOK, webhookTimeoutMs } from "./webhooks/webhooks";

/**
 * The loops' watchdog, run every minute by a cron (convex/crons.ts). Each single-writer loop — an org's
 * dispatcher, an org's summariser, a bulk operation, a webhook delivery, a parent's dependency settlement — marks
 * itself armed with a time;
 * a run that throws (or is lost) leaves that mark behind and, without this, nothing would ever schedule the
 * loop again. Any mark older than a few times the loop's expected run is re-armed under a new generation,
 * so a late run of the old one finds itself stale and writes nothing: two runs of one loop never both act.
 * Worst-case recovery: the stale age plus one watchdog period (docs/API.md, "Failure handling").
 */

/** A bulk operation re-armed this many times without a step running is given up. */
export const BULK_STALLS_MAX = 5;

/** Latches re-armed per kind per run; the next minute's run takes the rest. */
const REARMS_PER_RUN = 50;

export const check = internalMutation({
  args: {},
  handler: async (ctx) => {
    const now = Date.now();
    const rearmed = {
      dispatchers: await rearmDispatchers(ctx, now),
      summaries: await rearmSummaries(ctx, now),
      bulkOps: await rearmBulkOps(ctx, now),
      webhookDeliveries: await rearmDeliveries(ctx, now),
      settlements: await rearmSettlements(ctx, now),
    };
    if (Object.values(rearmed).some((n) => n > 0)) console.warn(`watchdog re-armed stalled loops: ${JSON.stringify(rearmed)}`);
    return rearmed;
  },
});

async function rearmDispatchers(ctx: MutationCtx, now: number): Promise<number> {
  const stale = await ctx.db
    .query("dispatchStates")
    .withIndex("by_scheduled_armed", (q) => q.eq("scheduled", true).lt("armedAt", now - TIMING.dispatchStaleMs))
    .take(REARMS_PER_RUN);
  for (const state of stale) {
    const generation = state.generation + 1;
    await ctx.db.patch(state._id, { generation, armedAt: now });
    await ctx.scheduler.runAfter(0, internal.dispatch.run, { orgId: state.orgId, generation });
    await noteMetrics(ctx, state.orgId, { rearmed: "dispatcher" });
    console.warn(`watchdog: dispatcher of org ${state.orgId} armed at ${state.armedAt ?? "?"} never finished; re-armed as generation ${generation}`);
  }
  return stale.length;
}

async function rearmSummaries(ctx: MutationCtx, now: number): Promise<number> {
  const stale = await ctx.db
    .query("summaryStates")
    .withIndex("by_scheduled_at", (q) => q.gte("scheduledAt", 0).lt("scheduledAt", now - TIMING.summaryStaleMs))
    .take(REARMS_PER_RUN);
  for (const state of stale) {
    const generation = (state.generation ?? 0) + 1;
    if (state.scheduledId) await cancelIfPending(ctx, state.scheduledId);
    const scheduledId = await ctx.scheduler.runAfter(0, internal.summary.refresh, { orgId: state.orgId, generation });
    await ctx.db.patch(state._id, { generation, scheduledAt: now, scheduledId });
    await noteMetrics(ctx, state.orgId, { rearmed: "summary" });
    console.warn(`watchdog: summary refresh of org ${state.orgId} due at ${state.scheduledAt} never ran; re-armed as generation ${generation}`);
  }
  return stale.length;
}

async function rearmBulkOps(ctx: MutationCtx, now: number): Promise<number> {
  const stale = await ctx.db
    .query("bulkOps")
    .withIndex("by_done_armed", (q) => q.eq("done", false).lt("armedAt", now - TIMING.bulkStaleMs))
    .take(REARMS_PER_RUN);
  for (const op of stale) {
    const generation = (op.generation ?? 0) + 1;
    const stalls = (op.stalls ?? 0) + 1;
    if (stalls > BULK_STALLS_MAX) {
      // a step that fails every time (see the logs) would be re-armed forever: the operation ends, saying why
      const error = `stopped after ${op.batches} batches: its next step failed ${BULK_STALLS_MAX + 1} times in a row; start it again once the cause is fixed`;
      await ctx.db.patch(op._id, { generation, done: true, finishedAt: now, armedAt: now, error });
      console.warn(`watchdog: bulk ${op.action} ${op._id} ${error}`);
      continue;
    }
    await ctx.db.patch(op._id, { generation, armedAt: now, stalls });
    await ctx.scheduler.runAfter(0, internal.consoleActions.bulkStep, { bulkId: op._id, generation });
    await noteMetrics(ctx, op.orgId, { rearmed: "bulk" });
    console.warn(`watchdog: bulk ${op.action} ${op._id} stopped after ${op.batches} batches; re-armed as generation ${generation}`);
  }
  return stale.length;
}

async function rearmDeliveries(ctx: MutationCtx, now: number): Promise<number> {
  // pending: its run was due at nextAt; sending: its attempt should have ended a timeout after it began
  const lost = await ctx.db
    .query("webhookDeliveries")
    .withIndex("by_state_next", (q) => q.eq("state", "pending").lt("nextAt", now - TIMING.webhookStaleMs))
    .take(REARMS_PER_RUN);
  const stuck = await ctx.db
    .query("webhookDeliveries")
    .withIndex("by_state_sending", (q) => q.eq("state", "sending").lt("sendingSince", now - webhookTimeoutMs() - TIMING.webhookStaleMs))
    .take(REARMS_PER_RUN);
  for (const row of [...lost, ...stuck]) {
    const generation = (row.generation ?? 0) + 1;
    // an attempt that never came back counts as a failed one (the console shows it; the 24 h give-up applies)
    const attempts =
      row.state === "sending" && row.sendingSince !== undefined
        ? [...row.attempts, { at: row.sendingSince, ms: now - row.sendingSince, error: "the delivery run stopped before the attempt ended", jobStatus: "unknown" }].slice(-WEBHOOK.attemptsKept)
        : row.attempts;
    if (now - row.firstAt > WEBHOOK.giveUpAfterMs) {
      await ctx.db.patch(row._id, { state: "failed", nextAt: undefined, sendingSince: undefined, attempts, generation });
      await noteMetrics(ctx, row.orgId, { webhook: "abandoned" });
      console.warn(`watchdog: webhook delivery ${row._id} (${row.state}) stalled past the 24 h give-up; marked failed`);
      continue;
    }
    await ctx.db.patch(row._id, { state: "pending", nextAt: now, sendingSince: undefined, attempts, generation });
    await ctx.scheduler.runAfter(0, internal.webhookDelivery.deliver, { deliveryId: row._id, generation });
    await noteMetrics(ctx, row.orgId, { rearmed: "webhook" });
    console.warn(`watchdog: webhook delivery ${row._id} (${row.state}) stalled; re-armed as generation ${generation}`);
  }
  return lost.length + stuck.length;
}

async function rearmSettlements(ctx: MutationCtx, now: number): Promise<number> {
  const stale = await ctx.db
    .query("settlements")
    .withIndex("by_armed", (q) => q.lt("armedAt", now - TIMING.settleStaleMs))
    .take(REARMS_PER_RUN);
  for (const row of stale) {
    // never given up: its children would wait for good; each re-arm halves its pages instead
    const stalls = (row.stalls ?? 0) + 1;
    await rearmSettlement(ctx, row, { generation: row.generation + 1, stalls });
    await noteMetrics(ctx, row.orgId, { rearmed: "settlement" });
    console.warn(`watchdog: dependency settlement ${row._id} of job ${row.parentId}${row.batchId !== undefined ? ` (batch ${JSON.stringify(row.batchId)})` : ""} stalled; re-armed as generation ${row.generation + 1}`);
  }
  return stale.length;
}
