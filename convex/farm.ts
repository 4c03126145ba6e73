import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
import { jobInOrg, managerFromKey, workerFromKey } from "./lib/auth";
import { cancelJob as cancelOneJob } from "./lib/cancel";
import { laneTotals, orgTotals, recentThroughput } from "./lib/counters";
import { listDeadLetters, purgeJob, retryDeadJob } from "./lib/deadLetters";
import { fail } from "./lib/errors";
import { orgLanes } from "./lib/lanes";
import { LIMITS, TIMING } from "./lib/limits";

/**
 * The farm at a glance for the worker's org. Reads O(lanes + workers) documents: lanes, their counter
 * shards, the org's counter shards, the workers and at most an hour of minute buckets — never jobs.
 */
export const overview = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await workerFromKey(ctx, apiKey);
    const now = Date.now();
    const lanes = await orgLanes(ctx, me.orgId);
    const perLane = await laneTotals(ctx, me.orgId, lanes.length);
    const finished = await orgTotals(ctx, me.orgId);
    const workers = await ctx.db
      .query("workers")
      .withIndex("by_org", (q) => q.eq("orgId", me.orgId))
      .take(LIMITS.workersListed);
    const throughput = await recentThroughput(ctx, me.orgId, now);
    const laneRows = lanes.map((lane) => ({
      routingKey: lane.routingKey,
      capabilities: lane.capabilities,
      pending: perLane.get(lane._id)?.pending ?? 0,
      running: perLane.get(lane._id)?.running ?? 0,
    }));
    const workerRows = workers.map((w) => ({
      workerId: w._id,
      name: w.name,
      machineId: w.machineId,
      keyPrefix: w.keyPrefix,
      maxConcurrentJobs: w.maxConcurrentJobs,
      lastSeenAt: w.lastSeenAt,
      revoked: w.revoked,
      online: !w.revoked && now - w.lastSeenAt <= TIMING.onlineWindowMs,
      isMe: w._id === me._id,
    }));
    return {
      counts: {
        pending: laneRows.reduce((s, l) => s + l.pending, 0),
        running: laneRows.reduce((s, l) => s + l.running, 0),
        ...finished,
      },
      lanes: laneRows,
      workers: workerRows,
      workersOnline: workerRows.filter((w) => w.online).length,
      throughput,
      finishedLastHour: throughput.reduce((s, m) => s + m.finished, 0),
      deadLetters: finished.dead,
      canManage: me.canManage,
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
    const job = await jobInOrg(ctx, me.orgId, args.jobId);
    if (!job) fail("not_found", "No such job in this org");
    await retryDeadJob(ctx, job);
  },
});

export const cancelJob = mutation({
  args: managedJobArgs,
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
    const job = await jobInOrg(ctx, me.orgId, args.jobId);
    if (!job) fail("not_found", "No such job in this org");
    return await cancelOneJob(ctx, job, `canceled by ${me.name}`);
  },
});

export const purgeDead = mutation({
  args: managedJobArgs,
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
    const job = await jobInOrg(ctx, me.orgId, args.jobId);
    if (!job) fail("not_found", "No such job in this org");
    if (job.status !== "dead") fail("invalid_argument", `Only dead letters can be purged here; this job is ${job.status}`);
    return { purged: await purgeJob(ctx, job) };
  },
});
