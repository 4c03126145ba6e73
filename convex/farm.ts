import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
import { managerFromKey, requireJobInOrg, workerFromKey } from "./lib/auth";
import { cancelJob as cancelOneJob } from "./lib/cancel";
import { listDeadLetters, purgeJob, retryDeadJob } from "./lib/deadLetters";
import { fail } from "./lib/errors";
import { TIMING } from "./lib/limits";
import { computeSummary, listsEveryWorker, summaryOf } from "./lib/summary";

/**
 * The farm at a glance for the worker's org, from the one summary row the summariser rewrites at most every
 * few seconds while things change (convex/summary.ts): an open view re-runs when that row changes, never per
 * job transition. `online` and `workersOnline` are as of this run; clients can compute them afresh from
 * `lastSeenAt` (online = a call within `onlineWindowMs`).
 */
export const overview = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await workerFromKey(ctx, apiKey);
    const now = Date.now();
    // An org that has never been summarised (made before summaries existed) is computed live until it is.
    const summary = (await summaryOf(ctx, me.orgId)) ?? (await computeSummary(ctx, me.orgId, now));
    const workers = summary.workers.map((w) => ({
      ...w,
      online: !w.revoked && now - w.lastSeenAt <= TIMING.onlineWindowMs,
      isMe: w.workerId === me._id,
    }));
    const throughput = summary.throughput.filter((m) => m.minuteStart > now - 60 * 60_000);
    return {
      counts: summary.counts,
      lanes: summary.lanes,
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
      refreshedAt: summary.refreshedAt,
      onlineWindowMs: TIMING.onlineWindowMs,
      now,
    };
  },
});

export const deadLetters = query({
  args: { apiKey: v.string(), limit: v.optional(v.number()) },
  handler: async (ctx, { apiKey, limit }) => {
    const me = await workerFromKey(ctx, apiKey);
    return await listDeadLetters(ctx, me.orgId, limit);
  },
});

/** Manager-only (enrolled with canManage) control-panel actions on one job of the worker's org. */
const managedJobArgs = { apiKey: v.string(), jobId: v.string() };

export const retryDead = mutation({
  args: managedJobArgs,
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    await retryDeadJob(ctx, job);
  },
});

export const cancelJob = mutation({
  args: managedJobArgs,
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    return await cancelOneJob(ctx, job, `canceled by ${me.name}`);
  },
});

export const purgeDead = mutation({
  args: managedJobArgs,
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
    const job = await requireJobInOrg(ctx, me.orgId, args.jobId);
    if (job.status !== "dead") fail("invalid_argument", `Only dead letters can be purged here; this job is ${job.status}`);
    return { purged: await purgeJob(ctx, job) };
  },
});
