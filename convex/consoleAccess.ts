import { v } from "convex/values";
import { mutation, query } from "./_generated/server";
import { createClientKeyFor, createEnrollmentToken, revokeWorkerNow } from "./lib/access";
import { managerFromKey } from "./lib/auth";
import { fail } from "./lib/errors";

/**
 * The operator's console: who may work for and submit to the org. Every function takes the `apiKey` of a
 * worker enrolled with canManage and acts only inside that worker's org. Secrets are returned once, when
 * made; lists show their prefixes only.
 */

const ACCESS_LISTED = 200;

export const list = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await managerFromKey(ctx, apiKey);
    const now = Date.now();
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
    return {
      enrollments: enrollments.map((e) => ({
        enrollmentId: e._id,
        tokenPrefix: e.tokenPrefix,
        capabilities: e.capabilities,
        maxConcurrentJobs: e.maxConcurrentJobs,
        canManage: e.canManage,
        createdAt: e._creationTime,
        expiresAt: e.expiresAt,
        usedAt: e.usedAt,
        workerId: e.workerId,
        revokedAt: e.revokedAt,
        state: e.revokedAt !== undefined ? "revoked" : e.usedAt !== undefined ? "used" : e.expiresAt <= now ? "expired" : "open",
      })),
      clientKeys: clientKeys.map((k) => ({
        clientKeyId: k._id,
        name: k.name,
        keyPrefix: k.keyPrefix,
        revoked: k.revoked,
        canPublish: k.canPublish === true,
        createdAt: k._creationTime,
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
  },
  handler: async (ctx, { apiKey, ...spec }) => {
    const me = await managerFromKey(ctx, apiKey);
    return await createEnrollmentToken(ctx, me.orgId, spec);
  },
});

/** An unused enrollment token stops working at once. */
export const revokeEnrollment = mutation({
  args: { apiKey: v.string(), enrollmentId: v.string() },
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
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
    const me = await managerFromKey(ctx, args.apiKey);
    return await createClientKeyFor(ctx, me.orgId, args.name, args.canPublish);
  },
});

export const revokeClientKey = mutation({
  args: { apiKey: v.string(), clientKeyId: v.string() },
  handler: async (ctx, args) => {
    const me = await managerFromKey(ctx, args.apiKey);
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
    const me = await managerFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("workers", args.workerId);
    const worker = id ? await ctx.db.get(id) : null;
    if (!worker || worker.orgId !== me.orgId) fail("not_found", "No such worker in this org");
    if (worker._id === me._id) fail("invalid_argument", "This is the key you are using: revoke it from another operator's console");
    if (worker.revoked) return { handedBack: 0 };
    return await revokeWorkerNow(ctx, worker);
  },
});

