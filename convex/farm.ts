import { v } from "convex/values";
import { query } from "./_generated/server";
import { workerFromKey } from "./access/auth";
import { daysOfWeek } from "./trust/credit";
import { listDeadLetters } from "./queue/deadLetters";
import { TIMING } from "./core/limits";
import { isOnline, lastCallOf } from "./lanes/presence";
import { computeSummary, listsEveryWorker, summaryOf } from "./queue/summary";
import { laneReason } from "./queue/waitReasons";

/**
 * The farm at a glance for the worker's org, from the one summary row the summariser rewrites at most every
 * few seconds while things change (convex/summary.ts): an open view re-runs when that row changes, never per
 * job transition, and never because time passed: nothing here reads the clock (issue 18). `online` and
 * `workersOnline` are as of `refreshedAt`; clients derive them afresh from `lastSeenAt`, `stoppedAt` and
 * `onlineWindowMs` (online = not stopped since, and a call within the window), and this machine's credit this
 * week from `credit.days` (the UTC days of the summary's week; a client sums those of its own current week).
 */
export const overview = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await workerFromKey(ctx, apiKey);
    // An org that has never been summarised (made before summaries existed) is computed once, as of its workers'
    // newest call: still no clock, so the answer stays the same until a write changes it.
    const summary = (await summaryOf(ctx, me.orgId)) ?? (await computeSummary(ctx, me.orgId, await lastCallOf(ctx, me.orgId)));
    const asOf = summary.refreshedAt;
    const workers = summary.workers.map((w) => ({
      ...w,
      online: isOnline(w, asOf),
      isMe: w.workerId === me._id,
    }));
    const throughput = summary.throughput.filter((m) => m.minuteStart > asOf - 60 * 60_000);
    // a big org's summary cannot hold every worker's days: then this worker's own (its rows re-run the view, only there)
    const mine = summary.creditDaysComplete === false ? await daysOfWeek(ctx, me._id, asOf) : (summary.creditDays ?? []).filter((d) => d.workerId === me._id);
    const days = mine.map(({ day, cpuMs, jobs, energyJ }) => ({ day, cpuHours: cpuMs / 3_600_000, jobs, energyJ: energyJ ?? 0 }));
    return {
      counts: summary.counts,
      // each lane with why nothing online runs it, in the words its jobs give (its machines are the summary's own)
      lanes: summary.lanes.map((row) => {
        const why = laneReason(row, summary);
        const lane = { ...row, onlineMachines: undefined };
        return why ? { ...lane, waitCode: why.code, waitReason: why.reason } : lane;
      }),
      workers,
      // from the list when it holds every worker, else as the summariser counted them all (the list is the first ones)
      workersOnline: listsEveryWorker(summary) ? workers.filter((w) => w.online).length : summary.workerCounts!.online,
      throughput,
      finishedLastHour: throughput.reduce((s, m) => s + m.finished, 0),
      deadLetters: summary.counts.dead,
      deadLetterList: summary.deadLetters,
      // jobs waiting for a machine no worker of this org has (by the facts the workers reported); absent: none
      ...(summary.unmeetable?.length ? { unmeetable: summary.unmeetable } : {}),
      canManage: me.canManage,
      // this machine's credit per UTC day of the summary's week (weeks start Monday 00:00 UTC)
      credit: { days },
      refreshedAt: asOf,
      onlineWindowMs: TIMING.onlineWindowMs,
    };
  },
});

/**
 * The worker's org's newest dead letters. The farm's reads for a worker key live here; acting on jobs (retry,
 * cancel, purge) is the operator's, in consoleActions:* (an operator key, or a worker key enrolled with canManage).
 */
export const deadLetters = query({
  args: { apiKey: v.string(), limit: v.optional(v.number()) },
  handler: async (ctx, { apiKey, limit }) => {
    const me = await workerFromKey(ctx, apiKey);
    return await listDeadLetters(ctx, me.orgId, limit);
  },
});
