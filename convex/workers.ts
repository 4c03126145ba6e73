import { v } from "convex/values";
import type { Doc } from "./_generated/dataModel";
import { mutation, query, type MutationCtx } from "./_generated/server";
import { effectiveCapabilities, workerFromKey } from "./access/auth";
import { checkCheckpointData, saveCheckpoint } from "./queue/checkpoints";
import { claimFromHeads, newClaimBudget, takeOffers } from "./queue/claimWork";
import { declareSlots, withdrawUnmetOffers } from "./queue/declare";
import { checkMaxBytes } from "./queue/downloadBytes";
import { checkEnergyJ, recordEnergy } from "./trust/energy";
import { fail as reject } from "./core/errors";
import { clearResync, inboxRows } from "./lanes/inbox";
import { displayPrefix, looksLikeSecret, newSecret, sha256Hex } from "./access/keys";
import { noteClaims, type ClaimNote } from "./lanes/counters";
import { kickForWaiter, kickSummary } from "./lanes/kick";
import { noteAdvertised, refreshLaneRows } from "./lanes/demand";
import { leasedWork } from "./queue/lease";
import { revokeWorkerNow } from "./queue/revoke";
import { LIMITS } from "./core/limits";
import { checkCpuMs, creditAttempt, weekCreditOf, creditTotalOf, DAY_MS, utcDay } from "./trust/credit";
import { markStopped, touchWorker } from "./lanes/presence";
import { deleteRevokedWorker, revokedOfMachine, workerRowBudget } from "./queue/workerRows";

/** The last UTC day myCredit accepts (the year 2500): a bound, not a policy. */
const MAX_DAY = 193_000;
import { failAttempt, finishJob, requeue } from "./queue/transitions";
import { addRunning, noteSlotState, runningCount } from "./lanes/workerSlots";
import { checkCapabilities, checkIntegerInRange, checkText, checkValueSize, utf8Bytes } from "./core/validate";
import { checkFacts, machineFacts, sameFacts } from "./lanes/facts";
import { inputsPage } from "./pipelines/inputs";
import { showInstanceProgress } from "./trust/instanceProgress";
import { completeReplica, failReplica, releaseReplica } from "./queue/validationComplete";
import { noteClaimed, quotaLeft, trustOf } from "./trust/validationTrust";
import { pendingCreditOf, settleCanceled } from "./trust/instanceCredit";

/** Worker-facing API. Every call but enroll takes the worker's `apiKey`. */

export const enroll = mutation({
  args: {
    token: v.string(),
    name: v.string(),
    machineId: v.string(),
    capabilities: v.array(v.string()),
    facts: v.optional(machineFacts),
  },
  handler: async (ctx, args) => {
    if (!looksLikeSecret("fh_e_", args.token)) reject("bad_key", "Malformed enrollment token (expected fh_e_…)");
    const facts = args.facts === undefined ? undefined : checkFacts(args.facts);
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
      // made by whoever made its token: revoking that key revokes this worker too (access/keyCreators.ts)
      ...(enrollment.createdBy ? { createdBy: enrollment.createdBy } : {}),
      keyHash: await sha256Hex(apiKey),
      keyPrefix: displayPrefix(apiKey),
      revoked: false,
      ...(facts ? { facts } : {}),
      ...(enrollment.donor !== undefined ? { donor: enrollment.donor } : {}),
      ...(enrollment.maxCores !== undefined ? { maxCores: enrollment.maxCores } : {}),
    });
    await ctx.db.insert("presence", { orgId: enrollment.orgId, workerId, lastSeenAt: now });
    // The same machine joining again replaces its revoked workers (it left, or was revoked) and keeps their credit.
    // (what one call cannot delete the retention sweep deletes later, without passing its credit on)
    const budget = workerRowBudget();
    for (const old of await revokedOfMachine(ctx, enrollment.orgId, machineId)) await deleteRevokedWorker(ctx, old, budget, workerId);
    await ctx.db.patch(enrollment._id, { usedAt: now, workerId });
    await kickSummary(ctx, enrollment.orgId);
    return { workerId, apiKey };
  },
});

/**
 * A worker over its reduced daily quota (an invalid result halved it) waits for no more than it may still claim
 * today, so offers do not go round to it; at full trust this reads nothing.
 */
async function withinQuota(ctx: MutationCtx, worker: Doc<"workers">, slots: number): Promise<number> {
  return worker.dailyQuota === undefined ? slots : Math.min(slots, await quotaLeft(ctx, worker, Date.now()));
}

/** `slots` on complete/fail/release/ready: the worker's concurrency now (0 = take nothing more). */
const slotsArg = v.optional(v.number());
/**
 * `maxBytes` on claim/ready/complete/fail/release: on a metered connection, what the worker's jobs may still download
 * (payloads, checkpoints, app modules; queue/downloadBytes.ts): only jobs that fit are offered and handed to it.
 * Absent: no limit. Sent again with each declaration of slots.
 */
const maxBytesArg = v.optional(v.number());

function checkSlots(slots: number | undefined): number | undefined {
  return slots === undefined ? undefined : checkIntegerInRange(slots, "slots", 0, LIMITS.maxConcurrentJobs);
}

/**
 * Up to `max` jobs, never more than the worker's free slots: first the jobs the dispatcher offered to this
 * worker (best first), then, only while it still wants more, the ready lane heads it can serve, in strict
 * order. If it still wants more after that, it is recorded as waiting and its doorbell will ring. An engine
 * answering its doorbell asks for exactly its offers, so its claims read only its own rows.
 */
export const claim = mutation({
  args: { apiKey: v.string(), capabilities: v.array(v.string()), max: v.optional(v.number()), maxBytes: maxBytesArg },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const max = checkIntegerInRange(args.max ?? 1, "max", 1, LIMITS.claimMax);
    const maxBytes = checkMaxBytes(args.maxBytes);
    const advertised = checkCapabilities(args.capabilities, "capabilities", LIMITS.capabilitiesPerWorker);
    await noteAdvertised(ctx, worker, advertised);
    const now = Date.now();
    const free = worker.maxConcurrentJobs - (await runningCount(ctx, worker));
    const wanted = Math.min(max, free, await quotaLeft(ctx, worker, now));
    const claims: ClaimNote[] = [];
    // what the claim returns stays well below Convex's limit on a function's return value
    const budget = newClaimBudget(maxBytes);
    const { claimed, complete } = await takeOffers(ctx, worker, wanted, now, budget, claims);
    if (claimed.length < wanted && complete && !budget.full) {
      // It wants more than it was offered (an engine's first claim, a simple caller): read the heads.
      const held = (await inboxRows(ctx, worker._id, "offer")).length;
      const fromHeads = Math.min(wanted, free - held) - claimed.length;
      if (fromHeads > 0) claimed.push(...(await claimFromHeads(ctx, worker, advertised, fromHeads, now, budget, claims)));
    }
    if (claimed.length > 0) await addRunning(ctx, worker.orgId, worker._id, claimed.length);
    await noteClaimed(ctx, worker, claimed.length, now);
    await noteClaims(ctx, worker.orgId, now, claims);
    return claimed;
  },
});

/**
 * The worker's one subscription: offers made to it (claim them with workers:claim, max = offers), cancel
 * notices for its running jobs, and `resync` when it must declare itself again (an offer to it expired).
 * Heartbeats, progress and output never change it.
 */
export const doorbell = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const worker = await workerFromKey(ctx, apiKey);
    const rows = await ctx.db
      .query("inbox")
      .withIndex("by_worker_kind", (q) => q.eq("workerId", worker._id))
      .take(LIMITS.inboxRows);
    return {
      offers: rows.filter((r) => r.kind === "offer").map((r) => ({ jobId: r.jobId!, expiresAt: r.expiresAt! })),
      cancel: rows.filter((r) => r.kind === "cancel").map((r) => r.jobId!),
      resync: rows.some((r) => r.kind === "resync"),
    };
  },
});

/**
 * Declare how many jobs this worker runs at once now (`slots`; 0 = take nothing more, e.g. paused or
 * stopping) without reading any lane head: it waits for offers for what is free, and offers beyond that go
 * back to the queue. `stopping`: the engine is stopping (slots must be 0): the worker shows offline at once,
 * last seen now, until its next call. Returns how many jobs it now waits for.
 */
export const ready = mutation({
  args: { apiKey: v.string(), capabilities: v.array(v.string()), slots: v.number(), stopping: v.optional(v.boolean()), maxBytes: maxBytesArg },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const slots = checkSlots(args.slots)!;
    const maxBytes = checkMaxBytes(args.maxBytes);
    if (args.stopping && slots !== 0) reject("invalid_argument", "A stopping worker declares slots: 0");
    const advertised = checkCapabilities(args.capabilities, "capabilities", LIMITS.capabilitiesPerWorker);
    await noteAdvertised(ctx, worker, advertised);
    if (args.stopping) {
      await markStopped(ctx, worker);
      await kickSummary(ctx, worker.orgId, "change");
    } else await touchWorker(ctx, worker);
    const capabilities = [...effectiveCapabilities(worker.allowedCapabilities, advertised)].sort();
    const waitingFor = await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), capabilities, maxBytes);
    await clearResync(ctx, worker._id);
    return { waitingFor };
  },
});

/**
 * The worker's machine as measured now (cores, memory, GPUs): jobs with requirements are routed by these.
 * Writes only when they changed. Returns whether they did.
 */
export const reportFacts = mutation({
  args: { apiKey: v.string(), facts: machineFacts },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const facts = checkFacts(args.facts);
    if (sameFacts(worker.facts, facts)) return { changed: false };
    await ctx.db.patch(worker._id, { facts });
    // waiting, it now waits in the lanes its machine can serve (a new GPU, more memory; or fewer)
    await refreshLaneRows(ctx, { ...worker, facts });
    await withdrawUnmetOffers(ctx, { ...worker, facts });
    await kickForWaiter(ctx, worker.orgId);
    await kickSummary(ctx, worker.orgId);
    return { changed: true };
  },
});

/** "Still here": an engine holding only its subscriptions calls this every 5 minutes (online = within 6). */
export const presence = mutation({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const worker = await workerFromKey(ctx, apiKey);
    const lastSeenAt = await touchWorker(ctx, worker, true);
    await kickSummary(ctx, worker.orgId, "presence");
    return { lastSeenAt };
  },
});

/**
 * Keep a running job's lease. `suspended`: the job is frozen on the worker (its owner is using the machine):
 * the lease is kept all the same, and the job shows `suspendedSince` from the first such heartbeat until the
 * first one without it.
 */
export const heartbeat = mutation({
  args: {
    apiKey: v.string(),
    leaseId: v.string(),
    progress: v.optional(v.number()),
    status: v.optional(v.string()),
    suspended: v.optional(v.boolean()),
  },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job, instance } = await leasedWork(ctx, worker, args.leaseId, { canceled: true });
    if (args.progress !== undefined && !(args.progress >= 0 && args.progress <= 1)) {
      reject("invalid_argument", `progress must be a fraction from 0 to 1, got ${args.progress}`);
    }
    const statusText = args.status === undefined ? undefined : checkText(args.status, "status", LIMITS.statusTextChars, true);
    const now = Date.now();
    if (instance) {
      // an instance of a replicated job: its own lease; the job shows its leading instance's progress
      if (instance.status === "canceled") return { cancel: true, leaseExpiresAt: instance.leaseExpiresAt ?? now };
      const said = { ...(args.progress !== undefined ? { progress: args.progress } : {}), ...(statusText !== undefined ? { statusText } : {}) };
      await ctx.db.patch(instance._id, { leaseExpiresAt: now + job.leaseMs, ...said });
      await showInstanceProgress(ctx, job, instance, said);
      return { cancel: false, leaseExpiresAt: now + job.leaseMs };
    }
    const leaseExpiresAt = now + job.leaseMs;
    const patch: Partial<Doc<"jobs">> = { leaseExpiresAt };
    if (args.suspended === true && job.suspendedSince === undefined) patch.suspendedSince = now;
    if (args.suspended !== true && job.suspendedSince !== undefined) patch.suspendedSince = undefined;
    // the worker's jobs froze or thawed (the engine does both to all of them): its state says so
    if ("suspendedSince" in patch) await noteSlotState(ctx, worker, { suspended: patch.suspendedSince !== undefined });
    if (args.progress !== undefined) patch.progress = args.progress;
    if (statusText !== undefined) patch.statusText = statusText;
    await ctx.db.patch(job._id, patch);
    return { cancel: job.cancelRequested === true, leaseExpiresAt };
  },
});

export const output = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), chunk: v.string() },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job, instance: running } = await leasedWork(ctx, worker, args.leaseId);
    // bytes, not characters: 8 KiB of CJK text or emoji is a third or a quarter as many characters
    if (args.chunk.length > LIMITS.outputChunkBytes || utf8Bytes(args.chunk) > LIMITS.outputChunkBytes) {
      reject("too_large", `An output chunk may hold at most ${LIMITS.outputChunkBytes} bytes of UTF-8`);
    }
    if (args.chunk.length === 0) return { seq: null };
    const last = await ctx.db
      .query("jobOutput")
      .withIndex("by_job_seq", (q) => q.eq("jobId", job._id))
      .order("desc")
      .first();
    const seq = last ? last.seq + 1 : 0;
    if (seq >= LIMITS.outputChunksPerJob) reject("too_large", `A job may stream at most ${LIMITS.outputChunksPerJob} chunks`);
    // a replicated job's chunk says which instance (worker) wrote it; a quorum-1 job reads nothing more
    const instance = running?._id;
    await ctx.db.insert("jobOutput", { orgId: job.orgId, jobId: job._id, seq, chunk: args.chunk, ...(instance ? { instance } : {}) });
    return { seq };
  },
});

/**
 * Keep the latest checkpoint of a job this worker holds the lease of (base64, at most 512 KiB decoded), in a
 * row beside the job; whichever run of the job comes next gets it with its claim. Replaces the previous one.
 */
export const checkpoint = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), data: v.string() },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job } = await leasedWork(ctx, worker, args.leaseId);
    const bytes = checkCheckpointData(args.data);
    await saveCheckpoint(ctx, job, args.data, bytes);
    return { bytes };
  },
});

/**
 * `cpuMs` on complete/fail: the CPU time the attempt's process used, when the worker could measure it; the
 * server clamps it to the attempt's wall time × the machine's cores, and credits wall time without it.
 */
const cpuMsArg = v.optional(v.number());
/**
 * `energyJ` on complete/fail: the energy the attempt used (joules), measured (the CPU package's counter, by the
 * attempt's share of the CPU time) or estimated (CPU time × watts per core); clamped to wall time × cores × 60 W.
 */
const energyJArg = v.optional(v.number());

export const complete = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), result: v.optional(v.any()), slots: slotsArg, cpuMs: cpuMsArg, maxBytes: maxBytesArg, energyJ: energyJArg },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job, instance } = await leasedWork(ctx, worker, args.leaseId, { canceled: true });
    const result: unknown = args.result ?? null;
    checkValueSize(result, "result", LIMITS.resultBytes);
    const slots = checkSlots(args.slots);
    const maxBytes = checkMaxBytes(args.maxBytes);
    await recordEnergy(ctx, worker, { type: job.type, startedAt: instance?.startedAt ?? job.startedAt }, checkEnergyJ(args.energyJ), Date.now());
    if (instance) {
      const cpuMs = checkCpuMs(args.cpuMs);
      let status: "succeeded" | "pending" | "dead" | "canceled" = "canceled";
      // canceled meanwhile (at quorum): its result is not needed, its CPU time may be
      if (instance.status === "canceled") await settleCanceled(ctx, job, instance, { worker, cpuMs });
      else status = await completeReplica(ctx, job, instance, worker, result, cpuMs);
      if (slots !== undefined) await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), undefined, maxBytes);
      return { status };
    }
    await creditAttempt(ctx, job, worker, checkCpuMs(args.cpuMs), "completed");
    let status: "succeeded" | "canceled" = "succeeded";
    if (job.cancelRequested) {
      await finishJob(ctx, job, "canceled", { result, workerId: worker._id, detail: "completed after cancel" });
      status = "canceled";
    } else {
      await ctx.db.patch(job._id, { progress: 1 });
      await finishJob(ctx, job, "succeeded", { result, workerId: worker._id });
    }
    if (slots !== undefined) await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), undefined, maxBytes);
    return { status };
  },
});

export const fail = mutation({
  args: {
    apiKey: v.string(),
    leaseId: v.string(),
    error: v.string(),
    retryable: v.optional(v.boolean()),
    slots: slotsArg,
    cpuMs: cpuMsArg,
    maxBytes: maxBytesArg,
    energyJ: energyJArg,
  },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job, instance } = await leasedWork(ctx, worker, args.leaseId, { canceled: true });
    const error = args.error.slice(0, LIMITS.errorChars) || "failed";
    const slots = checkSlots(args.slots);
    const maxBytes = checkMaxBytes(args.maxBytes);
    const cpuMs = checkCpuMs(args.cpuMs);
    await recordEnergy(ctx, worker, { type: job.type, startedAt: instance?.startedAt ?? job.startedAt }, checkEnergyJ(args.energyJ), Date.now());
    // an instance of a replicated job earns credit only for a valid result (or, canceled at quorum, up to one)
    if (instance?.status === "canceled") {
      await settleCanceled(ctx, job, instance, { worker, cpuMs });
      if (slots !== undefined) await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), undefined, maxBytes);
      return { status: "canceled" as const, availableAt: undefined };
    }
    // an instance's failure is one error result of its round, retryable or not (queue/validationComplete.ts)
    if (instance) await failReplica(ctx, job, instance, error, worker._id);
    else {
      await creditAttempt(ctx, job, worker, cpuMs, "failed");
      await failAttempt(ctx, job, error, args.retryable ?? true, worker._id);
    }
    const after = (await ctx.db.get(job._id))!;
    if (slots !== undefined) await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), undefined, maxBytes);
    return { status: after.status, availableAt: after.status === "pending" ? after.availableAt : undefined };
  },
});

export const release = mutation({
  args: { apiKey: v.string(), leaseId: v.string(), slots: slotsArg, maxBytes: maxBytesArg },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job, instance } = await leasedWork(ctx, worker, args.leaseId, { canceled: true });
    const slots = checkSlots(args.slots);
    const maxBytes = checkMaxBytes(args.maxBytes);
    let status: "pending" | "canceled" = "pending";
    if (instance?.status === "canceled") {
      await settleCanceled(ctx, job, instance, null);
      status = "canceled";
    } else if (instance) {
      await releaseReplica(ctx, job, instance, worker._id);
    } else if (job.cancelRequested) {
      await finishJob(ctx, job, "canceled", { workerId: worker._id, detail: "released after cancel" });
      status = "canceled";
    } else {
      await requeue(ctx, job, { kind: "release" }, worker._id);
    }
    if (slots !== undefined) await declareSlots(ctx, worker, await withinQuota(ctx, worker, slots), undefined, maxBytes);
    return { status };
  },
});

/**
 * The key probe: who this worker key is (`{ workerId, name }`), or its refusal (`bad_key`, `revoked`). The Join
 * flow checks a pasted worker key with it, and the deployment probe calls it with an empty key to see whether a
 * URL answers like Convex (a refusal in Convex's own JSON). It reads one document and no job.
 */
export const checkKey = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const worker = await workerFromKey(ctx, apiKey);
    return { workerId: worker._id, name: worker.name };
  },
});

/**
 * This machine leaves the farm: its own key is revoked (every later call with it is refused, as after an
 * operator's admin:revokeWorker), its running and offered jobs go back to the queue at once without burning an
 * attempt, and its row shows offline. Returns how many jobs went back.
 */
export const leave = mutation({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const worker = await workerFromKey(ctx, apiKey);
    return await revokeWorkerNow(ctx, worker, "worker left the farm");
  },
});

/**
 * This machine's credit: CPU-hours given this week (UTC, from Monday 00:00) and all time, with the jobs done;
 * `wallHours` of them were credited by wall time (CPU not measurable); `energyJ`: the energy its attempts used
 * (joules, as this machine measured or estimated it). `day`: the caller's current UTC day
 * (whole days since the epoch), which a subscriber advances, so the week turns on Monday without the clock in
 * the query; without it, the server's day when the query runs (for one-off reads). Donor views read their
 * credit from farm:overview (`credit.days`), which re-runs at most once per summary refresh.
 */
export const myCredit = query({
  args: { apiKey: v.string(), day: v.optional(v.number()) },
  handler: async (ctx, { apiKey, day }) => {
    const worker = await workerFromKey(ctx, apiKey);
    const today = day === undefined ? utcDay(Date.now()) : checkIntegerInRange(day, "day", 0, MAX_DAY);
    const week = await weekCreditOf(ctx, worker._id, today * DAY_MS);
    const total = await creditTotalOf(ctx, worker._id);
    const hours = (ms: number) => ms / 3_600_000;
    return {
      week: { cpuHours: hours(week.cpuMs), wallHours: hours(week.wallMs), jobs: week.jobs, failed: week.failed, canceledAtQuorum: week.canceledAtQuorum, energyJ: week.energyJ },
      allTime: {
        cpuHours: hours(total?.cpuMs ?? 0),
        wallHours: hours(total?.wallMs ?? 0),
        jobs: total?.jobs ?? 0,
        failed: total?.failed ?? 0,
        canceledAtQuorum: total?.canceledAtQuorum ?? 0,
        energyJ: total?.energyJ ?? 0,
      },
      // replicated jobs: credit waiting for validation, results that earned nothing and why, and trust
      ...(await pendingCreditOf(ctx, worker._id)),
      trust: await trustOf(ctx, worker),
    };
  },
});

/**
 * A running job's inputs: its parents' results (jobs it was submitted with `dependsOn`), a byte-budgeted page at a
 * time: `{ page: [{ jobId, externalId?, result }], cursor, done }`; pass `cursor` back (null first) until `done`.
 */
export const inputs = query({
  args: { apiKey: v.string(), leaseId: v.string(), cursor: v.union(v.string(), v.null()) },
  handler: async (ctx, args) => {
    const worker = await workerFromKey(ctx, args.apiKey);
    const { job } = await leasedWork(ctx, worker, args.leaseId);
    return await inputsPage(ctx, job, args.cursor);
  },
});
