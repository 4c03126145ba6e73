import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
import { createClientKeyFor, createEnrollmentToken, createOperatorKeyFor, revokeWorkerNow } from "./lib/access";
import { operatorFromKey } from "./lib/auth";
import { fail } from "./lib/errors";
import { LIMITS } from "./lib/limits";

/**
 * The operator's console: who may work for, submit to and manage the org. Every function takes an operator key
 * as `apiKey` (or the key of a worker enrolled with canManage) and acts only inside that key's org. Secrets are
 * returned once, when made; lists show their prefixes only.
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
      })),
      operatorKeys: operatorKeys.map((k) => ({
        operatorKeyId: k._id,
        name: k.name,
        keyPrefix: k.keyPrefix,
        revoked: k.revoked,
        createdAt: k._creationTime,
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
    return await createEnrollmentToken(ctx, me.orgId, spec);
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

/** A client key: `{ key, clientKeyId }`, the key shown once. */
export const createClientKey = mutation({
  args: { apiKey: v.string(), name: v.string(), canPublish: v.optional(v.boolean()) },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    return await createClientKeyFor(ctx, me.orgId, args.name, args.canPublish);
  },
});

export const revokeClientKey = mutation({
  args: { apiKey: v.string(), clientKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("clientKeys", args.clientKeyId);
    const key = id ? await ctx.db.get(id) : null;
    if (!key || key.orgId !== me.orgId) fail("not_found", "No such client key in this org");
    await ctx.db.patch(key._id, { revoked: true });
  },
});

/** The worker's key stops working and its jobs go back to the queue. An operator cannot revoke its own key here. */
export const revokeWorker = mutation({
  args: { apiKey: v.string(), workerId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("workers", args.workerId);
    const worker = id ? await ctx.db.get(id) : null;
    if (!worker || worker.orgId !== me.orgId) fail("not_found", "No such worker in this org");
    if (me.kind === "worker" && worker._id === me.workerId) fail("invalid_argument", "This is the key you are using: revoke it from another operator's console");
    if (worker.revoked) return { handedBack: 0 };
    return await revokeWorkerNow(ctx, worker);
  },
});


/** An operator key (fh_o_…): `{ key, operatorKeyId }`, the key shown once. */
export const createOperatorKey = mutation({
  args: { apiKey: v.string(), name: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    return await createOperatorKeyFor(ctx, me.orgId, args.name);
  },
});

/** The operator key stops working on its next call. The key in use cannot revoke itself here. */
export const revokeOperatorKey = mutation({
  args: { apiKey: v.string(), operatorKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("operatorKeys", args.operatorKeyId);
    const key = id ? await ctx.db.get(id) : null;
    if (!key || key.orgId !== me.orgId) fail("not_found", "No such operator key in this org");
    if (me.kind === "operator" && me.operatorKeyId === key._id) fail("invalid_argument", "This is the key you are using: revoke it from another operator's console");
    await ctx.db.patch(key._id, { revoked: true });
  },
});
