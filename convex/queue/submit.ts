import { v, type Infer } from "convex/values";
import { internal } from "../_generated/api";
import type { Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { appNameOf, pinApp, withAppMemory, withAppsCapability } from "../apps/entry";
import { setBody } from "../core/bodies";
import { bumpLane, noteMetrics, recordEvent, kickForJobs, kickSummary, laneFor, routingCapabilities, checkRequirements, classOf, jobRequirements, type JobRequirements } from "../lanes/entry";
import { arrivalOf, checkTraceparent } from "../observability/entry";
import { fail } from "../core/errors";
import { LIMITS } from "../core/limits";
import { CAPABILITY_PATTERN, checkCapabilities, checkIntegerInRange, checkText, checkValueSize } from "../core/validate";
import { checkDependsOn, checkNoCycle, dependsOnSpec, DEPENDENCY_FAILED, insertEdges, noteBatchJobAdded, resolveParents, unmetCount, type CheckedDependsOn, INPUTS_GONE, insertParentRefs } from "../pipelines/entry";
import { finishJob } from "./transitions";
import { checkValidation, validationSpec, type JobValidation, appCacheTtl, appValidation } from "../trust/entry";
import { checkFairnessKey } from "./fairLimits";
import { replayOf, specHashOf } from "./idempotency";
import { cacheKeyOf, cacheSpec, checkCacheSpec, jobInFlight, liveEntry, takeHitBytes } from "./resultCache";
import { finishFromCache } from "./cacheHits";

/** Everything a submitter may say about one job (the args of jobs:submit without the key). */
export const jobSpecFields = {
  type: v.string(),
  payload: v.optional(v.any()),
  priority: v.optional(v.number()),
  requiredCapabilities: v.optional(v.array(v.string())),
  externalId: v.optional(v.string()),
  maxAttempts: v.optional(v.number()),
  leaseMs: v.optional(v.number()),
  delayMs: v.optional(v.number()),
  runAt: v.optional(v.number()),
  batchId: v.optional(v.string()),
  requirements: v.optional(jobRequirements),
  // wait until these jobs, and every job of this batch, have succeeded (pipelines/dependencies.ts)
  dependsOn: v.optional(dependsOnSpec),
  // replication with a quorum (trust/validation.ts); none or quorum 1: the job runs once
  validation: v.optional(validationSpec),
  // whom the job is shared with inside its client key (queue/fairShare.ts), at most 64 bytes
  fairnessKey: v.optional(v.string()),
  // the W3C trace context of the submitter's span (observability/traceparent.ts): the worker's span of each run is its child
  traceparent: v.optional(v.string()),
  // reuse a believed result of identical work, and store this one's (queue/resultCache.ts): true or { ttlMs }
  cache: v.optional(cacheSpec),
};
export const jobSpec = v.object(jobSpecFields);
export type JobSpec = Infer<typeof jobSpec>;

type CheckedSpec = {
  type: string;
  payload: unknown;
  priority: number;
  capabilities: string[];
  externalId?: string;
  maxAttempts: number;
  leaseMs: number;
  availableAt: number;
  batchId?: string;
  payloadBytes: number;
  requirements?: JobRequirements;
  dependsOn?: CheckedDependsOn;
  validation?: JobValidation;
  // the submitter gave a validation (quorum 1 included): an app's default does not apply
  validationGiven?: boolean;
  fairnessKey?: string;
  traceparent?: string;
  cacheTtlMs?: number;
  // the submitter said `cache` (false included): an app's default does not apply
  cacheGiven?: boolean;
};

/** Validate one job spec; throws a ConvexError (invalid_argument / too_large) before anything is written. */
export function checkJobSpec(spec: JobSpec, now: number): CheckedSpec {
  const type = checkText(spec.type, "type", LIMITS.typeChars);
  // a type is the capability that routes it (an app's name is checked against the app's own pattern)
  if (appNameOf(type) === null && !CAPABILITY_PATTERN.test(type)) {
    fail("invalid_argument", `type "${type.slice(0, 80)}" must match [a-z0-9:._-]{1,64}: a job goes only to workers with a handler for its type`);
  }
  const payload: unknown = spec.payload ?? null;
  const payloadBytes = checkValueSize(payload, "payload", LIMITS.payloadBytes);
  // -0 would sort after every priority-0 job (Convex orders -0 before +0 and negPriority flips the sign)
  const priority = checkIntegerInRange(spec.priority ?? 0, "priority", LIMITS.priorityMin, LIMITS.priorityMax) || 0;
  const capabilities = checkCapabilities(spec.requiredCapabilities ?? [], "requiredCapabilities", LIMITS.capabilitiesPerJob);
  const maxAttempts = checkIntegerInRange(spec.maxAttempts ?? LIMITS.defaultMaxAttempts, "maxAttempts", 1, LIMITS.maxAttempts);
  const leaseMs = checkIntegerInRange(spec.leaseMs ?? LIMITS.defaultLeaseMs, "leaseMs", LIMITS.leaseMsMin, LIMITS.leaseMsMax);
  if (spec.delayMs !== undefined && spec.runAt !== undefined) fail("invalid_argument", "Give delayMs or runAt, not both");
  const delayMs = checkIntegerInRange(spec.delayMs ?? 0, "delayMs", 0, LIMITS.delayMsMax);
  if (spec.runAt !== undefined && (!Number.isFinite(spec.runAt) || spec.runAt > now + LIMITS.delayMsMax)) {
    fail("invalid_argument", "runAt must be a timestamp in ms within a year from now");
  }
  const availableAt = Math.max(now, spec.runAt ?? now + delayMs);
  const externalId = spec.externalId === undefined ? undefined : checkText(spec.externalId, "externalId", LIMITS.externalIdChars);
  const batchId = spec.batchId === undefined ? undefined : checkText(spec.batchId, "batchId", LIMITS.batchIdChars);
  const requirements = checkRequirements(spec.requirements);
  const dependsOn = checkDependsOn(spec.dependsOn);
  const validation = checkValidation(spec.validation);
  const fairnessKey = spec.fairnessKey === undefined ? undefined : checkFairnessKey(spec.fairnessKey);
  const traceparent = spec.traceparent === undefined ? undefined : checkTraceparent(spec.traceparent);
  const cacheTtlMs = checkCacheSpec(spec.cache, spec.dependsOn);
  return {
    type, payload, priority, capabilities, externalId, maxAttempts, leaseMs, availableAt, batchId, payloadBytes, requirements, dependsOn,
    ...(validation ? { validation } : {}),
    ...(spec.validation ? { validationGiven: true } : {}),
    ...(fairnessKey !== undefined ? { fairnessKey } : {}),
    ...(traceparent ? { traceparent } : {}),
    ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
    ...(spec.cache !== undefined ? { cacheGiven: true } : {}),
  };
}

/**
 * Plain helper for a host app's own mutations: enqueue one job for an org, in the caller's transaction.
 * With an externalId already used by the org's jobs submitted without a client key it returns the existing job's id
 * and writes nothing (another spec under it: idempotency_mismatch).
 */
export async function submitJob(ctx: MutationCtx, args: JobSpec & { orgId: Id<"orgs"> }): Promise<Id<"jobs">> {
  const { orgId, ...spec } = args;
  const org = await ctx.db.get(orgId);
  if (!org) fail("not_found", "No such org");
  return await insertCheckedJob(ctx, orgId, checkJobSpec(spec, Date.now()));
}

/** `clientKeyId`: the client key submitting it (its webhook hears the job's end); none from submitJob. */
export async function insertCheckedJob(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  spec: CheckedSpec,
  clientKeyId?: Id<"clientKeys">,
  extra: { scheduleId?: Id<"schedules"> } = {},
): Promise<Id<"jobs">> {
  return (await submitChecked(ctx, orgId, spec, clientKeyId, extra)).jobId;
}

/** insertCheckedJob, saying whether the externalId answered with a job submitted before (`replayed`). */
export async function submitChecked(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  spec: CheckedSpec,
  clientKeyId?: Id<"clientKeys">,
  extra: { scheduleId?: Id<"schedules"> } = {},
): Promise<{ jobId: Id<"jobs">; replayed: boolean }> {
  const specHash = spec.externalId === undefined ? undefined : specHashOf(spec);
  if (spec.externalId !== undefined) {
    const existing = await replayOf(ctx, orgId, clientKeyId, spec.externalId, specHash!);
    if (existing) return { jobId: existing, replayed: true };
  }
  return { jobId: await insertNewJob(ctx, orgId, spec, clientKeyId, extra, specHash), replayed: false };
}

async function insertNewJob(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  spec: CheckedSpec,
  clientKeyId: Id<"clientKeys"> | undefined,
  extra: { scheduleId?: Id<"schedules"> },
  specHash: string | undefined,
): Promise<Id<"jobs">> {
  // an app job runs the version that is the app's latest now, only on workers that run apps and whose
  // machines have the memory that version may use
  const app = await pinApp(ctx, orgId, spec.type);
  // an app's jobs submitted without validation get the default of the version they run
  if (app && !spec.validationGiven) spec = { ...spec, ...(await appValidation(ctx, orgId, app)) };
  // and without `cache` its version's cache default (none: not cached); a child of dependsOn is never cached
  if (app && !spec.cacheGiven && !spec.dependsOn) spec = { ...spec, ...(await appCacheTtl(ctx, orgId, app)) };
  const capabilities = app ? withAppsCapability(spec.capabilities) : spec.capabilities;
  const requirements = app ? withAppMemory(spec.requirements, app.memoryMB) : spec.requirements;
  const parents = spec.dependsOn ? await resolveParents(ctx, orgId, spec.dependsOn, spec.batchId) : undefined;
  if (parents && spec.batchId !== undefined) await checkNoCycle(ctx, orgId, spec.batchId, parents);
  const unmet = parents ? unmetCount(parents) : 0;
  const now = Date.now();
  const cache = spec.cacheTtlMs !== undefined ? { key: cacheKeyOf(spec.type, app?.sha256, spec.payload, requirements), ttlMs: spec.cacheTtlMs } : undefined;
  // a live entry answers it now; else an identical job in flight is waited on (single flight)
  const entry = cache ? await liveEntry(ctx, orgId, cache.key, now) : null;
  // each hit writes its copy of the result: past this transaction's share, it waits for a scheduled page instead
  const hit = entry && takeHitBytes(ctx, entry.resultBytes) ? entry : null;
  const source = entry && !hit ? ({ _id: entry.sourceJobId } as const) : cache ? await jobInFlight(ctx, orgId, cache.key) : null;
  const waiting = unmet > 0 || parents?.failedParent !== undefined || parents?.inputsGone !== undefined || hit !== null || source !== null;
  const lane = await laneFor(ctx, orgId, routingCapabilities(spec.type, capabilities), classOf(requirements), app);
  const delayed = spec.availableAt > now;
  const status = waiting ? "waiting" : "pending";
  const jobId = await ctx.db.insert("jobs", {
    orgId,
    laneId: lane._id,
    type: spec.type,
    payloadBytes: spec.payloadBytes,
    priority: spec.priority,
    negPriority: -spec.priority,
    requiredCapabilities: capabilities,
    status,
    queue: waiting ? undefined : delayed ? "delayed" : "ready",
    attempt: 0,
    maxAttempts: spec.maxAttempts,
    leaseMs: spec.leaseMs,
    availableAt: spec.availableAt,
    externalId: spec.externalId,
    batchId: spec.batchId,
    clientKeyId,
    ...(clientKeyId ? { keyCounted: true } : {}),
    ...(spec.fairnessKey !== undefined ? { fairnessKey: spec.fairnessKey } : {}),
    ...(requirements ? { requirements } : {}),
    ...(app ? { app } : {}),
    ...(parents ? { dependsOn: parents.dependsOn } : {}),
    ...(waiting && parents ? { unmetParents: unmet } : {}),
    ...(extra.scheduleId ? { scheduleId: extra.scheduleId } : {}),
    ...(spec.validation ? { validation: spec.validation } : {}),
    ...(spec.traceparent ? { traceparent: spec.traceparent } : {}),
    ...(specHash !== undefined ? { specHash } : {}),
    ...(cache ? { cache } : {}),
    ...(source ? { cacheWaitsOn: source._id } : {}),
    metered: true,
  });
  const arrival = arrivalOf({ type: spec.type, clientKeyId, status });
  await setBody(ctx, { _id: jobId, orgId }, "payload", spec.payload, spec.payloadBytes);
  await noteBatchJobAdded(ctx, orgId, spec.batchId, jobId);
  await recordEvent(ctx, { _id: jobId, orgId, attempt: 0 }, "submitted");
  // a waiting job is in no lane's counts: its arrival is a change of its own (the one write the metrics add to it)
  if (waiting) await noteMetrics(ctx, orgId, { jobs: arrival });
  if (hit) {
    await finishFromCache(ctx, jobId, hit);
    return jobId;
  }
  if (parents?.failedParent !== undefined) {
    // a parent already ended dead or canceled: the child ends with it, naming it
    const why = `parent job ${parents.failedParent} did not succeed`;
    await finishJob(ctx, (await ctx.db.get(jobId))!, "canceled", { error: why, detail: why, code: DEPENDENCY_FAILED, failedParent: parents.failedParent });
    return jobId;
  }
  if (parents?.inputsGone !== undefined) {
    await finishJob(ctx, (await ctx.db.get(jobId))!, "dead", { error: parents.inputsGone, detail: parents.inputsGone, code: INPUTS_GONE });
    return jobId;
  }
  if (parents) await insertParentRefs(ctx, orgId, jobId, parents.dependsOn);
  if (entry && !hit) await ctx.scheduler.runAfter(0, internal.cache.releaseWaiters, { sourceId: entry.sourceJobId, stored: true });
  if (waiting) {
    if (parents) await insertEdges(ctx, orgId, jobId, parents, spec.batchId);
    await kickSummary(ctx, orgId);
    return jobId;
  }
  await bumpLane(ctx, { orgId, laneId: lane._id, clientKeyId, keyCounted: clientKeyId !== undefined }, { pending: 1, jobs: arrival });
  if (delayed) await ctx.scheduler.runAt(spec.availableAt, internal.janitor.promote, { jobId });
  else await kickForJobs(ctx, orgId);
  await kickSummary(ctx, orgId);
  return jobId;
}
