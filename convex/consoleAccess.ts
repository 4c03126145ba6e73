import { v } from "convex/values";
import type { Id } from "./_generated/dataModel";
import { mutation, query, type QueryCtx } from "./_generated/server";
import { applyClientKeyLimits, fairnessWeightsOf, limitsFields } from "./queue/clientKeyLimits";
import { createClientKeyFor, createEnrollmentToken, createOperatorKeyFor } from "./access/access";
import { revokeClientKeyNow, revokeOperatorKeyNow, revokeWorkerWithMinted } from "./queue/revoke";
import { operatorFromKey } from "./access/auth";
import { fail } from "./core/errors";
import { mintedBy, minterOf, refuseEscalation } from "./access/keyCreators";
import { LIMITS } from "./core/limits";

/**
 * The operator's console: who may work for, submit to and manage the org. Every function takes an operator key
 * as `apiKey` (or the key of a worker enrolled with canManage) and acts only inside that key's org. Secrets are
 * returned once, when made; lists show their prefixes only. Every key made here records the key that made it;
 * revoking a key revokes what it made (access/keyCreators.ts). A worker's key makes no operator key and no key that
 * publishes apps.
 */

const ACCESS_LISTED = 200;

export const list = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await operatorFromKey(ctx, apiKey);
    const enrollments = await ctx.db
      .query("enrollments")
      .withIndex("by_org", (q) => q.eq("orgId", me.orgId))
      .order("desc")
      .take(ACCESS_LISTED);
    const clientKeys = await ctx.db
      .query("clientKeys")
      .withIndex("by_org", (q) => q.eq("orgId", me.orgId))
      .order("desc")
      .take(ACCESS_LISTED);
    const operatorKeys = await ctx.db
      .query("operatorKeys")
      .withIndex("by_org", (q) => q.eq("orgId", me.orgId))
      .order("desc")
      .take(ACCESS_LISTED);
    return {
      // an operator key makes operator keys and keys that publish apps; a managing worker's key does not
      asOperator: me.kind === "operator",
      // whether one worker's accepted answer (no quorum of 2) may enter the result cache
      cacheUnvalidated: (await ctx.db.get(me.orgId))?.cacheUnvalidated === true,
      enrollments: enrollments.map((e) => ({
        enrollmentId: e._id,
        tokenPrefix: e.tokenPrefix,
        capabilities: e.capabilities,
        maxConcurrentJobs: e.maxConcurrentJobs,
        canManage: e.canManage,
        donor: e.donor ?? null,
        maxCores: e.maxCores ?? LIMITS.defaultMaxCores,
        createdAt: e._creationTime,
        expiresAt: e.expiresAt,
        usedAt: e.usedAt,
        workerId: e.workerId,
        revokedAt: e.revokedAt,
        createdBy: e.createdBy ?? null,
        // "open" until expiresAt: the console says "expired" after it (no clock in a subscribed query)
        state: e.revokedAt !== undefined ? "revoked" : e.usedAt !== undefined ? "used" : "open",
      })),
      clientKeys: clientKeys.map((k) => ({
        clientKeyId: k._id,
        name: k.name,
        keyPrefix: k.keyPrefix,
        revoked: k.revoked,
        canPublish: k.canPublish === true,
        createdAt: k._creationTime,
        // its share of the farm (setClientKeyLimits): weight, at most this many running, fairness-key weights set
        weight: k.weight ?? 1,
        maxRunning: k.maxRunning ?? null,
        fairnessWeights: k.fairnessOverrides ?? 0,
        createdBy: k.createdBy ?? null,
      })),
      operatorKeys: operatorKeys.map((k) => ({
        operatorKeyId: k._id,
        name: k.name,
        keyPrefix: k.keyPrefix,
        revoked: k.revoked,
        createdAt: k._creationTime,
        createdBy: k.createdBy ?? null,
        isMe: me.kind === "operator" && me.operatorKeyId === k._id,
      })),
    };
  },
});

/** A one-time enrollment token: `{ token }` is shown once. */
export const createEnrollment = mutation({
  args: {
    apiKey: v.string(),
    capabilities: v.array(v.string()),
    maxConcurrentJobs: v.optional(v.number()),
    ttlMs: v.optional(v.number()),
    canManage: v.optional(v.boolean()),
    donor: v.optional(v.string()),
    maxCores: v.optional(v.number()),
  },
  handler: async (ctx, { apiKey, ...spec }) => {
    const me = await operatorFromKey(ctx, apiKey);
    return await createEnrollmentToken(ctx, me.orgId, spec, minterOf(me));
  },
});

/** An unused enrollment token stops working at once. */
export const revokeEnrollment = mutation({
  args: { apiKey: v.string(), enrollmentId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("enrollments", args.enrollmentId);
    const enrollment = id ? await ctx.db.get(id) : null;
    if (!enrollment || enrollment.orgId !== me.orgId) fail("not_found", "No such enrollment token in this org");
    if (enrollment.usedAt !== undefined) fail("invalid_argument", "This token was used already: revoke the worker it enrolled");
    if (enrollment.revokedAt !== undefined) return;
    const now = Date.now();
    await ctx.db.patch(enrollment._id, { revokedAt: now, expiresAt: Math.min(enrollment.expiresAt, now) });
  },
});

/** A client key: `{ key, clientKeyId }`, the key shown once. Only an operator key makes one that may publish apps. */
export const createClientKey = mutation({
  args: { apiKey: v.string(), name: v.string(), canPublish: v.optional(v.boolean()) },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    if (args.canPublish) refuseEscalation(me, "make a client key that may publish apps");
    return await createClientKeyFor(ctx, me.orgId, args.name, args.canPublish, minterOf(me));
  },
});

/** A key of this org, or the one not_found refusal (another org's key is as unknown as none). */
async function clientKeyInOrg(ctx: QueryCtx, orgId: Id<"orgs">, clientKeyId: string) {
  const id = ctx.db.normalizeId("clientKeys", clientKeyId);
  const key = id ? await ctx.db.get(id) : null;
  if (!key || key.orgId !== orgId) fail("not_found", "No such client key in this org");
  return key;
}

/**
 * A client key's share of the farm, as admin:setClientKeyLimits sets it (fields left out stay; null: default).
 * Operator keys only: a managing worker's key is refused (forbidden).
 */
export const setClientKeyLimits = mutation({
  args: { apiKey: v.string(), clientKeyId: v.string(), ...limitsFields },
  handler: async (ctx, { apiKey, clientKeyId, ...spec }) => {
    const me = await operatorFromKey(ctx, apiKey);
    refuseEscalation(me, "set a client key's share of the farm");
    return await applyClientKeyLimits(ctx, await clientKeyInOrg(ctx, me.orgId, clientKeyId), spec);
  },
});

/**
 * Let results accepted from one worker alone enter the org's result cache (off by default: a single donor's answer
 * is then handed to every identical job). An operator key only: a managing worker is a donor's machine.
 */
export const setCacheUnvalidated = mutation({
  args: { apiKey: v.string(), on: v.boolean() },
  handler: async (ctx, { apiKey, on }) => {
    const me = await operatorFromKey(ctx, apiKey);
    if (me.kind !== "operator") fail("forbidden", "Only an operator key decides which results the cache trusts");
    await ctx.db.patch(me.orgId, { cacheUnvalidated: on });
    return { cacheUnvalidated: on };
  },
});

/** A client key's fairness-key weights (at most 1,000), in key order. */
export const fairnessWeights = query({
  args: { apiKey: v.string(), clientKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const key = await clientKeyInOrg(ctx, me.orgId, args.clientKeyId);
    return await fairnessWeightsOf(ctx, key._id);
  },
});

export const revokeClientKey = mutation({
  args: { apiKey: v.string(), clientKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const key = await clientKeyInOrg(ctx, me.orgId, args.clientKeyId);
    return await revokeClientKeyNow(ctx, key);
  },
});

/**
 * The worker's key stops working and its jobs go back to the queue; what it made as a managing worker goes too
 * (`alsoRevoked`; revoking it again revokes what is left). An operator cannot revoke its own key here.
 */
export const revokeWorker = mutation({
  args: { apiKey: v.string(), workerId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("workers", args.workerId);
    const worker = id ? await ctx.db.get(id) : null;
    if (!worker || worker.orgId !== me.orgId) fail("not_found", "No such worker in this org");
    if (me.kind === "worker" && worker._id === me.workerId) fail("invalid_argument", "This is the key you are using: revoke it from another operator's console");
    return await revokeWorkerWithMinted(ctx, worker);
  },
});


/** An operator key (fh_o_…): `{ key, operatorKeyId }`, the key shown once. Only an operator key makes one. */
export const createOperatorKey = mutation({
  args: { apiKey: v.string(), name: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    refuseEscalation(me, "make an operator key");
    return await createOperatorKeyFor(ctx, me.orgId, args.name, minterOf(me));
  },
});

/**
 * What revoking this operator key or worker would also revoke (the console asks first): the keys, unused tokens and
 * workers it made that still work, each kind counted up to 100 (`more`: more than that), not counting what those made.
 */
export const minted = query({
  args: { apiKey: v.string(), keyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const operatorKeyId = ctx.db.normalizeId("operatorKeys", args.keyId);
    const workerId = ctx.db.normalizeId("workers", args.keyId);
    const key = operatorKeyId ? await ctx.db.get(operatorKeyId) : workerId ? await ctx.db.get(workerId) : null;
    if (!key || key.orgId !== me.orgId) fail("not_found", "No such operator key or worker in this org");
    return await mintedBy(ctx, key._id);
  },
});

/** The operator key stops working on its next call, with what it made (`alsoRevoked`). The key in use cannot revoke itself here. */
export const revokeOperatorKey = mutation({
  args: { apiKey: v.string(), operatorKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("operatorKeys", args.operatorKeyId);
    const key = id ? await ctx.db.get(id) : null;
    if (!key || key.orgId !== me.orgId) fail("not_found", "No such operator key in this org");
    if (me.kind === "operator" && me.operatorKeyId === key._id) fail("invalid_argument", "This is the key you are using: revoke it from another operator's console");
    return await revokeOperatorKeyNow(ctx, key);
  },
});
