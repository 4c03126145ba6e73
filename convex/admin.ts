import { v } from "convex/values";
import { internalMutation, internalQuery } from "./_generated/server";
import { createOrgShards } from "./lanes/counters";
import { fail } from "./core/errors";
import { createClientKeyFor, createEnrollmentToken, createOperatorKeyFor } from "./access/access";
import { revokeClientKeyNow, revokeOperatorKeyNow, revokeWorkerWithMinted } from "./queue/revoke";
import { ensureDispatchState } from "./lanes/kick";
import { computeSummary } from "./queue/summary";
import { LIMITS } from "./core/limits";
import { checkText } from "./core/validate";
import { listDeadLetters, purgeJob, retryDeadJob } from "./queue/deadLetters";
import { applyClientKeyLimits, limitsFields } from "./queue/clientKeyLimits";
import { childReading } from "./pipelines/parentRefs";

/** Operator functions: internal only, run with `npx convex run admin:<name> '<json args>'`. */

export const createOrg = internalMutation({
  args: { name: v.string() },
  handler: async (ctx, { name }) => {
    const orgId = await ctx.db.insert("orgs", { name: checkText(name, "name", LIMITS.nameChars) });
    await createOrgShards(ctx, orgId);
    await ensureDispatchState(ctx, orgId);
    const now = Date.now();
    await ctx.db.insert("summaries", await computeSummary(ctx, orgId, now));
    await ctx.db.insert("summaryStates", { orgId, refreshedAt: now });
    return orgId;
  },
});

export const createEnrollment = internalMutation({
  args: {
    orgId: v.id("orgs"),
    capabilities: v.array(v.string()),
    maxConcurrentJobs: v.optional(v.number()),
    ttlMs: v.optional(v.number()),
    canManage: v.optional(v.boolean()),
    donor: v.optional(v.string()),
    maxCores: v.optional(v.number()),
  },
  handler: async (ctx, { orgId, ...spec }) => {
    if (!(await ctx.db.get(orgId))) fail("not_found", "No such org");
    const { token } = await createEnrollmentToken(ctx, orgId, spec);
    return { token };
  },
});

/** `canPublish`: the key may also publish and delete farm apps (POST/DELETE /api/apps/…). Default false. */
export const createClientKey = internalMutation({
  args: { orgId: v.id("orgs"), name: v.string(), canPublish: v.optional(v.boolean()) },
  handler: async (ctx, { orgId, name, canPublish }) => {
    if (!(await ctx.db.get(orgId))) fail("not_found", "No such org");
    return await createClientKeyFor(ctx, orgId, name, canPublish);
  },
});

/**
 * An operator key (fh_o_…) for the console and the CLI's operator commands: `{ key, operatorKeyId }`, the key
 * shown once. It manages the org; it never works as a worker key.
 */
export const createOperatorKey = internalMutation({
  args: { orgId: v.id("orgs"), name: v.string() },
  handler: async (ctx, { orgId, name }) => {
    if (!(await ctx.db.get(orgId))) fail("not_found", "No such org");
    return await createOperatorKeyFor(ctx, orgId, name);
  },
});

/** The key stops working, and so do the keys, tokens and workers it made (access/keyCreators.ts): `{ alsoRevoked }`. */
export const revokeOperatorKey = internalMutation({
  args: { operatorKeyId: v.id("operatorKeys") },
  handler: async (ctx, { operatorKeyId }) => {
    const key = await ctx.db.get(operatorKeyId);
    if (!key) fail("not_found", "No such operator key");
    return await revokeOperatorKeyNow(ctx, key);
  },
});

/**
 * See access/access.ts revokeWorkerNow: the key stops working and the worker's jobs go back to the queue; what a managing
 * worker made from the console goes too: `{ handedBack, alsoRevoked }`.
 */
export const revokeWorker = internalMutation({
  args: { workerId: v.id("workers") },
  handler: async (ctx, { workerId }) => {
    const worker = await ctx.db.get(workerId);
    if (!worker) fail("not_found", "No such worker");
    return await revokeWorkerWithMinted(ctx, worker);
  },
});

/** The key stops working; its schedules pause, saying why: `{ schedulesPaused }`. */
export const revokeClientKey = internalMutation({
  args: { clientKeyId: v.id("clientKeys") },
  handler: async (ctx, { clientKeyId }) => {
    const key = await ctx.db.get(clientKeyId);
    if (!key) fail("not_found", "No such client key");
    return await revokeClientKeyNow(ctx, key);
  },
});

/**
 * A client key's share of the farm: `weight` against the org's other keys (0.001–1000; null: 1), `maxRunning` of
 * its jobs and instances at once (null: no limit), `fairnessWeights` for its fairness keys (at most 1,000; replaces
 * the ones set before; null: none). A field left out stays as it is. Returns the key's limits.
 */
export const setClientKeyLimits = internalMutation({
  args: { clientKeyId: v.id("clientKeys"), ...limitsFields },
  handler: async (ctx, { clientKeyId, ...spec }) => {
    const key = await ctx.db.get(clientKeyId);
    if (!key) fail("not_found", "No such client key");
    return await applyClientKeyLimits(ctx, key, spec);
  },
});

export const listDead = internalQuery({
  args: { orgId: v.id("orgs"), limit: v.optional(v.number()) },
  handler: async (ctx, { orgId, limit }) => await listDeadLetters(ctx, orgId, limit),
});

export const retryDead = internalMutation({
  args: { jobId: v.id("jobs") },
  handler: async (ctx, { jobId }) => {
    const job = await ctx.db.get(jobId);
    if (!job) fail("not_found", "No such job");
    await retryDeadJob(ctx, job);
  },
});

/** A succeeded job that a child not yet ended reads as its input is kept: refused, naming the child. */
export const purge = internalMutation({
  args: { jobId: v.id("jobs") },
  handler: async (ctx, { jobId }) => {
    const job = await ctx.db.get(jobId);
    if (!job) fail("not_found", "No such job");
    const child = await childReading(ctx, job);
    if (child) fail("invalid_argument", `Job ${jobId} is an input of job ${child}, which has not ended: it is kept until that job ends`);
    return await purgeJob(ctx, job);
  },
});
