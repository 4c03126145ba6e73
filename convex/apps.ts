import { v } from "convex/values";
import { internalMutation, internalQuery, query } from "./_generated/server";
import { APP_LIMITS, SHA256_HEX } from "./core/appLimits";
import { appWorkerFromKey, checkAppLimits, checkAppName, findVersion, latestVersion, publisherFromKey, versionView } from "./apps/apps";
import { clientFromKey } from "./access/auth";
import { fail } from "./core/errors";
import { canonicalJson } from "./core/canonical";
import { defaultSpec, validationSpec } from "./trust/validation";
import { checkCacheSpec } from "./queue/resultCache";

/**
 * Farm apps. Publishing and deleting go through HTTP (`POST /api/apps/<name>`, `DELETE /api/apps/<name>/<version>`,
 * see convex/apps/appsHttp.ts): a module is bytes in file storage, which only an HTTP action can receive.
 * These functions are what those routes run, plus `apps:list` for any client key of the org.
 */

/** The org's app versions whose modules exist, by name then version (at most APP_LIMITS.versionsListed). */
export const list = query({
  args: { clientKey: v.string() },
  handler: async (ctx, { clientKey }) => {
    const client = await clientFromKey(ctx, clientKey);
    const rows = await ctx.db
      .query("appVersions")
      .withIndex("by_org_deleted_name", (q) => q.eq("orgId", client.orgId).eq("deleted", false))
      .take(APP_LIMITS.versionsListed);
    return rows.map(versionView);
  },
});

/** Checks a publishing key and a version's limits before the module is read; the org publishing. */
export const checkPublish = internalQuery({
  args: {
    clientKey: v.string(),
    name: v.string(),
    memoryMB: v.optional(v.number()),
    timeoutMs: v.optional(v.number()),
    validation: v.optional(validationSpec),
    cacheTtlMs: v.optional(v.number()),
  },
  handler: async (ctx, args) => {
    const publisher = await publisherFromKey(ctx, args.clientKey);
    checkAppName(args.name);
    const limits = checkAppLimits(args.memoryMB, args.timeoutMs);
    const validation = defaultSpec(args.validation);
    const cacheTtlMs = args.cacheTtlMs === undefined ? undefined : checkCacheSpec({ ttlMs: args.cacheTtlMs }, undefined);
    const latest = await latestVersion(ctx, publisher.orgId, args.name);
    return {
      ...limits,
      ...(validation ? { validation } : {}),
      ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
      latest: latest && !latest.deleted ? { ...versionView(latest) } : null,
    };
  },
});

/**
 * Records a stored module as the app's next version, unless the latest version has the same bytes and limits:
 * then that version is the answer and `created` is false (the caller deletes the module it stored).
 */
export const recordVersion = internalMutation({
  args: {
    clientKey: v.string(),
    name: v.string(),
    sha256: v.string(),
    bytes: v.number(),
    memoryMB: v.optional(v.number()),
    timeoutMs: v.optional(v.number()),
    storageId: v.id("_storage"),
    validation: v.optional(validationSpec),
    cacheTtlMs: v.optional(v.number()),
  },
  handler: async (ctx, args) => {
    const publisher = await publisherFromKey(ctx, args.clientKey);
    const name = checkAppName(args.name);
    const limits = checkAppLimits(args.memoryMB, args.timeoutMs);
    const validation = defaultSpec(args.validation);
    const cacheTtlMs = args.cacheTtlMs === undefined ? undefined : checkCacheSpec({ ttlMs: args.cacheTtlMs }, undefined);
    if (!SHA256_HEX.test(args.sha256)) fail("invalid_argument", "sha256 must be 64 lowercase hex digits");
    if (!Number.isInteger(args.bytes) || args.bytes < 8 || args.bytes > APP_LIMITS.moduleBytesMax) {
      fail("invalid_argument", `bytes must be a whole number from 8 to ${APP_LIMITS.moduleBytesMax}`);
    }
    const latest = await latestVersion(ctx, publisher.orgId, name);
    const sameRules = canonicalJson(latest?.validation ?? null) === canonicalJson(validation ?? null) && latest?.cacheTtlMs === cacheTtlMs;
    if (latest && !latest.deleted && latest.sha256 === args.sha256 && latest.memoryMB === limits.memoryMB && latest.timeoutMs === limits.timeoutMs && sameRules) {
      return { created: false, ...versionView(latest) };
    }
    const id = await ctx.db.insert("appVersions", {
      orgId: publisher.orgId,
      name,
      version: (latest?.version ?? 0) + 1,
      sha256: args.sha256,
      bytes: args.bytes,
      ...limits,
      ...(validation ? { validation } : {}),
      ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
      storageId: args.storageId,
      ...publisher.by,
      createdAt: Date.now(),
      deleted: false,
    });
    return { created: true, ...versionView((await ctx.db.get(id))!) };
  },
});

/** Deletes a version's module; its row stays, marked deleted. Deleting it again answers the same. */
export const deleteVersion = internalMutation({
  args: { clientKey: v.string(), name: v.string(), version: v.number() },
  handler: async (ctx, args) => {
    const publisher = await publisherFromKey(ctx, args.clientKey);
    const row = await findVersion(ctx, publisher.orgId, checkAppName(args.name), args.version);
    if (!row) fail("not_found", `App ${args.name} has no version ${args.version}`);
    if (!row.deleted) {
      if (row.storageId) await ctx.storage.delete(row.storageId);
      await ctx.db.patch(row._id, { deleted: true, deletedAt: Date.now(), storageId: undefined });
    }
    return { name: row.name, version: row.version, deleted: true };
  },
});

/** Where a version's module is, for a worker of the same org allowed to run apps. */
export const moduleForWorker = internalQuery({
  args: { apiKey: v.string(), name: v.string(), version: v.number() },
  handler: async (ctx, args) => {
    const worker = await appWorkerFromKey(ctx, args.apiKey);
    const row = await findVersion(ctx, worker.orgId, checkAppName(args.name), args.version);
    if (!row) fail("not_found", `App ${args.name} has no version ${args.version}`);
    if (row.deleted || !row.storageId) fail("gone", `Version ${args.version} of app ${args.name} was deleted`);
    return { storageId: row.storageId, sha256: row.sha256, bytes: row.bytes };
  },
});
