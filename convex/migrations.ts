import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc, Id } from "./_generated/dataModel";
import { internalMutation, type MutationCtx } from "./_generated/server";
import { moveBodies } from "./core/bodies";
import { bumpLane, noteMetrics } from "./lanes/counters";
import { kickForJobs, kickSummary } from "./lanes/kick";
import { laneFor } from "./lanes/laneFor";
import { arrivalOf } from "./observability/moves";
import { routingKey } from "./lanes/lanes";
import { classOf } from "./lanes/requirements";
import { routingCapabilities } from "./lanes/routing";
import { saveJobSpec } from "./pipelines/schedules";
import type { JobSpec } from "./queue/submit";


/**
 * Data migrations, hand-rolled: each runs in bounded batches and reschedules itself until it is through.
 * (The @convex-dev/migrations component would do the bookkeeping, but a component needs `convex codegen`
 * against a deployment, which this repo's offline build cannot run.) Start one with
 * `npx convex run migrations:<name> '{}'`; running it again is harmless.
 */

/** Old rows are read (and their bodies written again beside them) up to this many bytes per batch. */
const MOVE_BYTES_PER_BATCH = 2 * 1024 * 1024;
const MOVE_JOBS_PER_BATCH = 100;

/**
 * Move the bodies of jobs written before bodies lived beside them (payload, result, a long error) into
 * `jobBodies`. Until it is through, every reader falls back to the job's own fields (core/bodies.ts).
 */
export const moveJobBodies = internalMutation({
  args: { cursor: v.optional(v.string()) },
  handler: async (ctx, { cursor }) => {
    const page = await ctx.db
      .query("jobs")
      .paginate({ cursor: cursor ?? null, numItems: MOVE_JOBS_PER_BATCH, maximumBytesRead: MOVE_BYTES_PER_BATCH });
    let moved = 0;
    for (const job of page.page) if (await moveBodies(ctx, job)) moved++;
    if (!page.isDone) await ctx.scheduler.runAfter(0, internal.migrations.moveJobBodies, { cursor: page.continueCursor });
    return { scanned: page.page.length, moved, done: page.isDone };
  },
});

/**
 * Move the job specs of schedules written before specs lived beside them into `scheduleBodies`, so that every list of
 * schedules reads small rows. Until it is through, ticks fall back to the row's own `job` (pipelines/schedules.ts).
 */
export const moveScheduleBodies = internalMutation({
  args: { cursor: v.optional(v.string()) },
  handler: async (ctx, { cursor }) => {
    const page = await ctx.db
      .query("schedules")
      .paginate({ cursor: cursor ?? null, numItems: MOVE_JOBS_PER_BATCH, maximumBytesRead: MOVE_BYTES_PER_BATCH });
    let moved = 0;
    for (const schedule of page.page) {
      if (schedule.job === undefined) continue;
      const fields = await saveJobSpec(ctx, schedule.orgId, schedule._id, schedule.job as JobSpec);
      await ctx.db.patch(schedule._id, { ...fields, job: undefined });
      moved++;
    }
    if (!page.isDone) await ctx.scheduler.runAfter(0, internal.migrations.moveScheduleBodies, { cursor: page.continueCursor });
    return { scanned: page.page.length, moved, done: page.isDone };
  },
});

/**
 * Jobs read per transaction: a job row may still carry a 256 KiB payload, and moving it rewrites the row, so
 * 20 of them stay under Convex's 8 MiB write limit.
 */
const JOBS_PER_BATCH = 20;

type Unfinished = "pending" | "running";

/**
 * Since a job's type routes it, its lane's key starts with its type's capability (lanes/routing.ts). Jobs
 * queued before that sit in lanes keyed by their required capabilities alone, where any worker may take
 * them: this moves every unfinished job into the lane of its type, with its pending/running count, one org
 * and status at a time, JOBS_PER_BATCH per transaction, rescheduling itself until done. Idempotent; run it
 * once after deploying (`npx convex run migrations:routeByType '{}'`). Emptied lanes go in the lane
 * maintenance pass.
 */
export const routeByType = internalMutation({
  args: {
    orgId: v.optional(v.id("orgs")),
    status: v.optional(v.union(v.literal("pending"), v.literal("running"))),
    cursor: v.optional(v.union(v.string(), v.null())),
  },
  handler: async (ctx, args) => {
    const orgId = args.orgId ?? (await nextOrg(ctx));
    if (!orgId) return { moved: 0, done: true };
    const status: Unfinished = args.status ?? "pending";
    const page = await ctx.db
      .query("jobs")
      .withIndex("by_org_status", (q) => q.eq("orgId", orgId).eq("status", status))
      .paginate({ cursor: args.cursor ?? null, numItems: JOBS_PER_BATCH, maximumBytesRead: MOVE_BYTES_PER_BATCH });
    let moved = 0;
    const lanes = new Map<Id<"lanes">, Doc<"lanes"> | null>();
    for (const job of page.page) {
      if (await moveToTypeLane(ctx, job, lanes)) moved++;
    }
    if (moved > 0) {
      await kickForJobs(ctx, orgId);
      await kickSummary(ctx, orgId);
    }
    const next = page.isDone ? await nextStep(ctx, orgId, status) : { orgId, status, cursor: page.continueCursor };
    if (next) await ctx.scheduler.runAfter(0, internal.migrations.routeByType, next);
    return { moved, done: next === null };
  },
});

/** Move one job to the lane its type and capabilities route it to; false when it is there already. */
async function moveToTypeLane(ctx: MutationCtx, job: Doc<"jobs">, lanes: Map<Id<"lanes">, Doc<"lanes"> | null>): Promise<boolean> {
  const capabilities = routingCapabilities(job.type, job.requiredCapabilities);
  const requirements = classOf(job.requirements);
  if (!lanes.has(job.laneId)) lanes.set(job.laneId, await ctx.db.get(job.laneId));
  const current = lanes.get(job.laneId);
  if (current && current.routingKey === routingKey(capabilities, requirements)) return false;
  const lane = await laneFor(ctx, job.orgId, capabilities, requirements, job.app);
  // an offered job counts as running in its lane (lanes/counters.ts), like one that runs
  const counts = job.status === "pending" && job.queue !== "offered" ? "pending" : "running";
  // the job moves on as it was: its key's running slot (if it holds one) is not freed
  await bumpLane(ctx, job, { [counts]: -1 }, { moved: true });
  await ctx.db.patch(job._id, { laneId: lane._id });
  await bumpLane(ctx, { orgId: job.orgId, laneId: lane._id, clientKeyId: job.clientKeyId, keyCounted: job.keyCounted }, { [counts]: 1 });
  return true;
}

const METER_JOBS_PER_BATCH = 200;

/**
 * Count the jobs queued before the metrics existed: each job not yet metered is counted in its status now (one
 * counter change per batch, the summariser folds it) and marked metered, so its later moves count too. Until this
 * runs, such jobs are simply not in GET /api/metrics (nothing is counted down that was not counted up). One org at a
 * time, 200 jobs a transaction, rescheduling itself; idempotent.
 */
export const meterJobs = internalMutation({
  args: { orgId: v.optional(v.id("orgs")), cursor: v.optional(v.union(v.string(), v.null())) },
  handler: async (ctx, args) => {
    const orgId = args.orgId ?? (await nextOrg(ctx));
    if (!orgId) return { metered: 0, done: true };
    const page = await ctx.db
      .query("jobs")
      .withIndex("by_org", (q) => q.eq("orgId", orgId))
      .paginate({ cursor: args.cursor ?? null, numItems: METER_JOBS_PER_BATCH, maximumBytesRead: MOVE_BYTES_PER_BATCH });
    const unmetered = page.page.filter((job) => !job.metered);
    for (const job of unmetered) await ctx.db.patch(job._id, { metered: true });
    await noteMetrics(ctx, orgId, { jobs: unmetered.flatMap((job) => arrivalOf(job)) });
    const nextOrgId = page.isDone ? await nextOrg(ctx, orgId) : orgId;
    if (nextOrgId) await ctx.scheduler.runAfter(0, internal.migrations.meterJobs, { orgId: nextOrgId, cursor: page.isDone ? null : page.continueCursor });
    return { metered: unmetered.length, done: nextOrgId === null };
  },
});

/** After one org's pending jobs come its running ones, then the next org's. */
async function nextStep(ctx: MutationCtx, orgId: Id<"orgs">, status: Unfinished) {
  if (status === "pending") return { orgId, status: "running" as const, cursor: null };
  const org = await nextOrg(ctx, orgId);
  return org ? { orgId: org, status: "pending" as const, cursor: null } : null;
}

async function nextOrg(ctx: MutationCtx, after?: Id<"orgs">): Promise<Id<"orgs"> | null> {
  const previous = after ? await ctx.db.get(after) : null;
  const org = await ctx.db
    .query("orgs")
    .withIndex("by_creation_time", (q) => (previous ? q.gt("_creationTime", previous._creationTime) : q))
    .first();
  return org?._id ?? null;
}
