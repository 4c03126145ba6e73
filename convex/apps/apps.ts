import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { APP_LIMITS, APPS_CAPABILITY } from "../core/appLimits";
import { clientFromKey, effectiveCapabilities, operatorFromKey, workerFromKey } from "../access/entry";
import { fail } from "../core/errors";


export function checkAppName(name: string): string {
  if (!APP_LIMITS.namePattern.test(name)) {
    fail("invalid_argument", `An app name must match [a-z0-9][a-z0-9-]{0,63}; got ${JSON.stringify(name.slice(0, 80))}`);
  }
  return name;
}

/** A version's limits, from query parameters or defaults; out of range is invalid_argument. */
export function checkAppLimits(memoryMB: number | undefined, timeoutMs: number | undefined): { memoryMB: number; timeoutMs: number } {
  const whole = (value: number, name: string, min: number, max: number) => {
    if (!Number.isInteger(value) || value < min || value > max) {
      fail("invalid_argument", `${name} must be a whole number from ${min} to ${max}; got ${value}`);
    }
    return value;
  };
  return {
    memoryMB: whole(memoryMB ?? APP_LIMITS.memoryMBDefault, "memoryMB", APP_LIMITS.memoryMBMin, APP_LIMITS.memoryMBMax),
    timeoutMs: whole(timeoutMs ?? APP_LIMITS.timeoutMsDefault, "timeoutMs", APP_LIMITS.timeoutMsMin, APP_LIMITS.timeoutMsMax),
  };
}

/**
 * A client key that may publish apps, or an operator key (fh_o_…, which manages the org and so its apps); any
 * other key is refused (bad_key/revoked, or forbidden). `by`: who, as a version's row records it.
 */
export async function publisherFromKey(
  ctx: QueryCtx,
  key: string,
): Promise<{ orgId: Id<"orgs">; by: { publishedBy: Id<"clientKeys"> } | { publishedByOperator: Id<"operatorKeys"> } }> {
  if (key.startsWith("fh_o_")) {
    const operator = await operatorFromKey(ctx, key);
    if (operator.kind !== "operator") fail("bad_key", "Malformed operator key (expected fh_o_…)");
    return { orgId: operator.orgId, by: { publishedByOperator: operator.operatorKeyId } };
  }
  const client = await clientFromKey(ctx, key);
  if (!client.canPublish) fail("forbidden", "This client key may not publish apps; create one with canPublish: true");
  return { orgId: client.orgId, by: { publishedBy: client._id } };
}

/** A worker whose enrollment allows the `apps` capability. */
export async function appWorkerFromKey(ctx: QueryCtx, apiKey: string): Promise<Doc<"workers">> {
  const worker = await workerFromKey(ctx, apiKey);
  if (!effectiveCapabilities(worker.allowedCapabilities, [APPS_CAPABILITY]).has(APPS_CAPABILITY)) {
    fail("forbidden", "This worker's enrollment does not allow running apps");
  }
  return worker;
}

export async function findVersion(ctx: QueryCtx, orgId: Id<"orgs">, name: string, version: number) {
  return await ctx.db
    .query("appVersions")
    .withIndex("by_org_name_version", (q) => q.eq("orgId", orgId).eq("name", name).eq("version", version))
    .unique();
}

/** The app's newest version, deleted or not (version numbers are never reused). */
export async function latestVersion(ctx: QueryCtx, orgId: Id<"orgs">, name: string) {
  return await ctx.db
    .query("appVersions")
    .withIndex("by_org_name_version", (q) => q.eq("orgId", orgId).eq("name", name))
    .order("desc")
    .first();
}

/** The newest version whose module still exists: what a job submitted now would be pinned to. */
export async function latestLiveVersion(ctx: QueryCtx, orgId: Id<"orgs">, name: string) {
  return await ctx.db
    .query("appVersions")
    .withIndex("by_org_deleted_name", (q) => q.eq("orgId", orgId).eq("deleted", false).eq("name", name))
    .order("desc")
    .first();
}

/** What callers see of a version (apps:list, the publish answer). */
export function versionView(row: Doc<"appVersions">) {
  return {
    name: row.name,
    version: row.version,
    sha256: row.sha256,
    bytes: row.bytes,
    memoryMB: row.memoryMB,
    timeoutMs: row.timeoutMs,
    createdAt: row.createdAt,
    // the validation its jobs get by default (issue 20); none: quorum 1
    ...(row.validation ? { validation: row.validation } : {}),
    ...(row.cacheTtlMs !== undefined ? { cacheTtlMs: row.cacheTtlMs } : {}),
  };
}
