import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc, Id } from "./_generated/dataModel";
import { mutation, query } from "./_generated/server";
import { effectiveCapabilities, workerFromKey } from "./lib/auth";
import { bumpLane } from "./lib/counters";
import { fail as reject } from "./lib/errors";
import { recordEvent } from "./lib/events";
import { displayPrefix, looksLikeSecret, newLeaseId, newSecret, sha256Hex } from "./lib/keys";
import { eligibleLanes } from "./lib/lanes";
import { leasedJob } from "./lib/lease";
import { CLAIM_SPREAD, LIMITS } from "./lib/limits";
import { pickJobs, readyHeads } from "./lib/claim";
import { failAttempt, finishJob, requeue, touchWorker } from "./lib/transitions";
import { checkCapabilities, checkIntegerInRange, checkText, checkValueSize } from "./lib/validate";

/** Worker-facing API. Every call but enroll takes the worker's `apiKey`. */

export const enroll = mutation({
  args: { token: v.string(), name: v.string(), machineId: v.string(), capabilities: v.array(v.string()) },
  handler: async (ctx, args) => {
    if (!looksLikeSecret("fh_e_", args.token)) reject("bad_key", "Malformed enrollment token (expected fh_e_…)");
    const name = checkText(args.name, "name", LIMITS.nameChars);
    const machineId = checkText(args.machineId, "machineId", LIMITS.nameChars);
    const advertised = checkCapabilities(args.capabilities, "capabilities", LIMITS.capabilitiesPerWorker);
    const tokenHash = await sha256Hex(args.token);
    const enrollment = await ctx.db
      .query("enrollments")
      .withIndex("by_hash", (q) => q.eq("tokenHash", tokenHash))
      .unique();
    if (!enrollment) reject("bad_key", "Unknown enrollment token");
    if (enrollment.usedAt !== undefined) reject("token_used", "This enrollment token has already been used");
    const now = Date.now();
    if (enrollment.expiresAt <= now) reject("token_expired", "This enrollment token has expired");
    const apiKey = newSecret("fh_w_");
    const workerId = await ctx.db.insert("workers", {
      orgId: enrollment.orgId,
      name,
      machineId,
      allowedCapabilities: enrollment.capabilities,
      advertisedCapabilities: advertised,
      maxConcurrentJobs: enrollment.maxConcurrentJobs,
      canManage: enrollment.canManage,
      keyHash: await sha256Hex(apiKey),
      keyPrefix: displayPrefix(apiKey),
      revoked: false,
      lastSeenAt: now,
    });
    await ctx.db.patch(enrollment._id, { usedAt: now, workerId });
    return { workerId, apiKey };
  },
});

export const watch = query({
  args: { apiKey: v.string(), capabilities: v.array(v.string()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const advertised = checkCapabilities(args.capabilities, "capabilities", LIMITS.capabilitiesPerWorker);
    const lanes = await eligibleLanes(ctx, worker.orgId, effectiveCapabilities(worker.allowedCapabilities, advertised));
    let nextAvailableAt: number | undefined;
    for (const lane of lanes) {
      const ready = await ctx.db
        .query("jobs")
        .withIndex("by_lane_ready", (q) => q.eq("laneId", lane._id).eq("queue", "ready"))
        .first();
      if (ready) return { available: true };
      const delayed = await ctx.db
        .query("jobs")
        .withIndex("by_lane_delayed", (q) => q.eq("laneId", lane._id).eq("queue", "delayed"))
        .first();
      if (delayed && (nextAvailableAt === undefined || delayed.availableAt < nextAvailableAt)) {
        nextAvailableAt = delayed.availableAt;
      }
    }
    return nextAvailableAt === undefined ? { available: false } : { available: false, nextAvailableAt };
  },
});

export const claim = mutation({
  args: { apiKey: v.string(), capabilities: v.array(v.string()), max: v.optional(v.number()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const max = checkIntegerInRange(args.max ?? 1, "max", 1, LIMITS.claimMax);
    const advertised = checkCapabilities(args.capabilities, "capabilities", LIMITS.capabilitiesPerWorker);
    await touchWorker(ctx, worker);
    const running = await ctx.db
      .query("jobs")
      .withIndex("by_worker_status", (q) => q.eq("workerId", worker._id).eq("status", "running"))
      .take(worker.maxConcurrentJobs);
    const wanted = Math.min(max, worker.maxConcurrentJobs - running.length);
    if (wanted <= 0) return [];
    const lanes = await eligibleLanes(ctx, worker.orgId, effectiveCapabilities(worker.allowedCapabilities, advertised));
    const picked = pickJobs(await readyHeads(ctx, lanes, wanted + CLAIM_SPREAD - 1), wanted);
    const now = Date.now();
    const claimed = [];
    const claimedPerLane = new Map<Id<"lanes">, { job: Doc<"jobs">; count: number }>();
    for (const candidate of picked) {
      const job = await ctx.db.get(candidate._id);
      if (!job || job.status !== "pending" || job.queue !== "ready") continue;
      const leaseId = newLeaseId();
      const attempt = job.attempt + 1;
      const leaseExpiresAt = now + job.leaseMs;
      await ctx.db.patch(job._id, {
        status: "running",
        queue: undefined,
        attempt,
        leaseId,
        leaseExpiresAt,
        workerId: worker._id,
        startedAt: now,
        progress: undefined,
        statusText: undefined,
      });
      await recordEvent(ctx, { ...job, attempt }, "claimed", { workerId: worker._id });
      await ctx.scheduler.runAt(leaseExpiresAt, internal.janitor.checkLease, { jobId: job._id, leaseId });
      const lane = claimedPerLane.get(job.laneId) ?? { job, count: 0 };
      claimedPerLane.set(job.laneId, { job, count: lane.count + 1 });
      claimed.push({ jobId: job._id, leaseId, type: job.type, payload: job.payload, attempt, leaseMs: job.leaseMs, leaseExpiresAt });
    }
    // one counter write per lane, however many of its jobs were claimed
    for (const { job, count } of claimedPerLane.values()) await bumpLane(ctx, job, { pending: -count, running: count });
    return claimed;
  },
});

export const heartbeat = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), progress: v.optional(v.number()), status: v.optional(v.string()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const job = await leasedJob(ctx, worker, args.leaseId);
    if (args.progress !== undefined && !(args.progress >= 0 && args.progress <= 1)) {
      reject("invalid_argument", `progress must be a fraction from 0 to 1, got ${args.progress}`);
    }
    const statusText = args.status === undefined ? undefined : checkText(args.status, "status", LIMITS.statusTextChars, true);
    const leaseExpiresAt = Date.now() + job.leaseMs;
    const patch: Partial<Doc<"jobs">> = { leaseExpiresAt };
    if (args.progress !== undefined) patch.progress = args.progress;
    if (statusText !== undefined) patch.statusText = statusText;
    await ctx.db.patch(job._id, patch);
    await touchWorker(ctx, worker);
    return { cancel: job.cancelRequested === true, leaseExpiresAt };
  },
});

export const output = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), chunk: v.string() },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const job = await leasedJob(ctx, worker, args.leaseId);
    if (args.chunk.length > LIMITS.outputChunkChars) {
      reject("too_large", `An output chunk may hold at most ${LIMITS.outputChunkChars} characters`);
    }
    if (args.chunk.length === 0) return { seq: null };
    const last = await ctx.db
      .query("jobOutput")
      .withIndex("by_job_seq", (q) => q.eq("jobId", job._id))
      .order("desc")
      .first();
    const seq = last ? last.seq + 1 : 0;
    if (seq >= LIMITS.outputChunksPerJob) reject("too_large", `A job may stream at most ${LIMITS.outputChunksPerJob} chunks`);
    await ctx.db.insert("jobOutput", { orgId: job.orgId, jobId: job._id, seq, chunk: args.chunk });
    return { seq };
  },
});

export const complete = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), result: v.optional(v.any()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const job = await leasedJob(ctx, worker, args.leaseId);
    const result = args.result ?? null;
    checkValueSize(result, "result", LIMITS.resultBytes);
    await touchWorker(ctx, worker);
    if (job.cancelRequested) {
      await finishJob(ctx, job, "canceled", { result, workerId: worker._id, detail: "completed after cancel" });
      return { status: "canceled" as const };
    }
    await ctx.db.patch(job._id, { progress: 1 });
    await finishJob(ctx, job, "succeeded", { result, workerId: worker._id });
    return { status: "succeeded" as const };
  },
});

export const fail = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), error: v.string(), retryable: v.optional(v.boolean()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const job = await leasedJob(ctx, worker, args.leaseId);
    const error = args.error.slice(0, LIMITS.errorChars) || "failed";
    await touchWorker(ctx, worker);
    await failAttempt(ctx, job, error, args.retryable ?? true, worker._id);
    const after = (await ctx.db.get(job._id))!;
    return { status: after.status, availableAt: after.status === "pending" ? after.availableAt : undefined };
  },
});

export const release = mutation({
  args: { apiKey: v.string(), leaseId: v.string() },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const job = await leasedJob(ctx, worker, args.leaseId);
    await touchWorker(ctx, worker);
    if (job.cancelRequested) {
      await finishJob(ctx, job, "canceled", { workerId: worker._id, detail: "released after cancel" });
      return { status: "canceled" as const };
    }
    await requeue(ctx, job, { kind: "release" }, worker._id);
    return { status: "pending" as const };
  },
});

export const mine = query({
  args: { apiKey: v.string() },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const jobs = await ctx.db
      .query("jobs")
      .withIndex("by_worker_status", (q) => q.eq("workerId", worker._id).eq("status", "running"))
      .take(LIMITS.maxConcurrentJobs);
    return jobs.map((job) => ({
      jobId: job._id,
      leaseId: job.leaseId!,
      type: job.type,
      attempt: job.attempt,
      progress: job.progress,
      statusText: job.statusText,
      cancelRequested: job.cancelRequested === true,
      startedAt: job.startedAt,
      leaseExpiresAt: job.leaseExpiresAt,
    }));
  },
});
