import { v, type Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { canonicalJson } from "../core/canonical";
import { fail } from "../core/errors";
import { TIMING } from "../core/limits";
import { TX_BUDGET } from "../core/budget";
import { classOf, type JobRequirements } from "../lanes/entry";
import { Sha256 } from "../core/sha256";
import { checkIntegerInRange, valueBytes } from "../core/validate";

/**
 * The result cache: a job submitted with `cache` whose key (its type, its app version's sha256, its payload and its
 * requirements class) has a live entry is created already succeeded with that entry's result, and no donor runs it.
 * What the cache trusts: a result enters only when a quorum of at least 2 workers agreed on it (or, for an org that
 * opts in with cacheUnvalidated, one worker's accepted answer), and only at the moment its job succeeds. Nothing later
 * revisits a succeeded job, so an entry leaves by its ttl, an operator's invalidateCache, or retention; a job answered
 * from an entry keeps that result after the entry is gone.
 */

export const cacheSpec = v.union(v.boolean(), v.object({ ttlMs: v.optional(v.number()) }));
export type CacheSpec = Infer<typeof cacheSpec>;

/** How long an entry lives unless the spec says (and at most: a cached result outlives no job's retention). */
export const CACHE_TTL_DEFAULT_MS = TIMING.defaultRetentionMs;

/** The ttl of a job submitted with `cache`, or undefined without one. */
export function checkCacheSpec(spec: CacheSpec | undefined, dependsOn: unknown): number | undefined {
  if (spec === undefined || spec === false) return undefined;
  // a child's work includes its parents' results, which its key does not name
  if (dependsOn !== undefined) fail("invalid_argument", "cache: a job with dependsOn reads its parents' results, which its cache key does not cover");
  if (spec === true || spec.ttlMs === undefined) return CACHE_TTL_DEFAULT_MS;
  return checkIntegerInRange(spec.ttlMs, "cache.ttlMs", TIMING.cacheTtlMinMs, CACHE_TTL_DEFAULT_MS);
}

/** SHA-256 (hex) of the canonical (type, app version's sha256, payload, requirements class). */
export function cacheKeyOf(type: string, appSha256: string | undefined, payload: unknown, requirements: JobRequirements | undefined): string {
  const identity = { type, app: appSha256 ?? null, payload: payload ?? null, class: classOf(requirements) ?? null };
  return new Sha256().update(new TextEncoder().encode(canonicalJson(identity))).hex();
}

/** Result bytes the hits of one transaction may copy (a batch of 500 hits of a large result would pass the write cap). */
const HIT_BYTES_PER_TRANSACTION = TX_BUDGET.writeBytes / 2;
const hitBytes = new WeakMap<object, number>();

/** Count a hit's copy against its transaction's share; false when it would pass it (the job then waits for a page). */
export function takeHitBytes(ctx: QueryCtx, bytes: number): boolean {
  const spent = hitBytes.get(ctx.db) ?? 0;
  if (spent > 0 && spent + bytes > HIT_BYTES_PER_TRANSACTION) return false;
  hitBytes.set(ctx.db, spent + bytes);
  return true;
}

/** The live entry under this key, or null. */
export async function liveEntry(ctx: QueryCtx, orgId: Id<"orgs">, key: string, now: number): Promise<Doc<"cacheEntries"> | null> {
  const entry = await ctx.db
    .query("cacheEntries")
    .withIndex("by_org_key", (q) => q.eq("orgId", orgId).eq("key", key))
    .first();
  return entry && entry.expiresAt > now ? entry : null;
}

/** An entry's result (its own row: entries are listed and scanned without it). */
export async function entryResult(ctx: QueryCtx, entryId: Id<"cacheEntries">): Promise<unknown> {
  const row = await ctx.db
    .query("cacheResults")
    .withIndex("by_entry", (q) => q.eq("entryId", entryId))
    .first();
  return row?.result ?? null;
}

/** An identical cacheable job still queued or running (single flight), or null. */
export async function jobInFlight(ctx: QueryCtx, orgId: Id<"orgs">, key: string): Promise<Doc<"jobs"> | null> {
  for (const status of ["running", "pending"] as const) {
    const job = await ctx.db
      .query("jobs")
      .withIndex("by_org_cache_status", (q) => q.eq("orgId", orgId).eq("cache.key", key).eq("status", status))
      .first();
    if (job) return job;
  }
  return null;
}

/**
 * A cacheable job just succeeded with `result`: store it under its key if the farm has reason to believe it (`agreeing`
 * workers returned it: 2 or more, or 1 for an org with cacheUnvalidated). Returns whether it was stored.
 */
export async function storeResult(ctx: MutationCtx, job: Doc<"jobs">, result: unknown, agreeing: number): Promise<boolean> {
  if (!job.cache || job.cachedFrom !== undefined) return false;
  const validated = agreeing >= 2;
  if (!validated && !(await ctx.db.get(job.orgId))?.cacheUnvalidated) return false;
  const now = Date.now();
  const fields = { type: job.type, sourceJobId: job._id, resultBytes: valueBytes(result ?? null), validated, createdAt: now, expiresAt: now + job.cache.ttlMs };
  const old = await ctx.db
    .query("cacheEntries")
    .withIndex("by_org_key", (q) => q.eq("orgId", job.orgId).eq("key", job.cache!.key))
    .first();
  if (old) {
    await ctx.db.patch(old._id, fields);
    const row = await ctx.db.query("cacheResults").withIndex("by_entry", (q) => q.eq("entryId", old._id)).first();
    if (row) await ctx.db.patch(row._id, { result: result ?? null });
    else await ctx.db.insert("cacheResults", { entryId: old._id, result: result ?? null });
    return true;
  }
  const entryId = await ctx.db.insert("cacheEntries", { orgId: job.orgId, key: job.cache.key, ...fields });
  await ctx.db.insert("cacheResults", { entryId, result: result ?? null });
  return true;
}

/** Drop an entry and its result. */
export async function deleteEntry(ctx: MutationCtx, entry: Doc<"cacheEntries">): Promise<void> {
  const row = await ctx.db.query("cacheResults").withIndex("by_entry", (q) => q.eq("entryId", entry._id)).first();
  if (row) await ctx.db.delete(row._id);
  await ctx.db.delete(entry._id);
}
