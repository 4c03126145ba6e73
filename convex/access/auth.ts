import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { fail } from "../core/errors";
import { looksLikeSecret, sha256Hex } from "./keys";

export async function workerFromKey(ctx: QueryCtx, apiKey: string): Promise<Doc<"workers">> {
  if (!looksLikeSecret("fh_w_", apiKey)) fail("bad_key", "Malformed worker API key (expected fh_w_…)");
  const keyHash = await sha256Hex(apiKey);
  const worker = await ctx.db
    .query("workers")
    .withIndex("by_hash", (q) => q.eq("keyHash", keyHash))
    .unique();
  if (!worker) fail("bad_key", "Unknown worker API key");
  if (worker.revoked) fail("revoked", "This worker's API key has been revoked");
  return worker;
}

export async function clientFromKey(ctx: QueryCtx, clientKey: string): Promise<Doc<"clientKeys">> {
  if (!looksLikeSecret("fh_c_", clientKey)) fail("bad_key", "Malformed client key (expected fh_c_…)");
  const keyHash = await sha256Hex(clientKey);
  const client = await ctx.db
    .query("clientKeys")
    .withIndex("by_hash", (q) => q.eq("keyHash", keyHash))
    .unique();
  if (!client) fail("bad_key", "Unknown client key");
  if (client.revoked) fail("revoked", "This client key has been revoked");
  return client;
}

export async function managerFromKey(ctx: QueryCtx, apiKey: string): Promise<Doc<"workers">> {
  const worker = await workerFromKey(ctx, apiKey);
  if (!worker.canManage) fail("forbidden", "This worker was not enrolled with permission to manage the farm");
  return worker;
}

/**
 * Who is using the console (or an operator command): an operator key (fh_o_…), or, as before operator keys
 * existed, the key of a worker enrolled with canManage (such grants keep working until the operator revokes them).
 */
export type Operator =
  | { kind: "operator"; orgId: Id<"orgs">; name: string; operatorKeyId: Id<"operatorKeys"> }
  | { kind: "worker"; orgId: Id<"orgs">; name: string; workerId: Id<"workers"> };

export async function operatorFromKey(ctx: QueryCtx, apiKey: string): Promise<Operator> {
  if (looksLikeSecret("fh_w_", apiKey)) {
    const worker = await managerFromKey(ctx, apiKey);
    return { kind: "worker", orgId: worker.orgId, name: worker.name, workerId: worker._id };
  }
  if (!looksLikeSecret("fh_o_", apiKey)) fail("bad_key", "Malformed operator key (expected fh_o_…, or the fh_w_… key of a worker that may manage the farm)");
  const keyHash = await sha256Hex(apiKey);
  const key = await ctx.db
    .query("operatorKeys")
    .withIndex("by_hash", (q) => q.eq("keyHash", keyHash))
    .unique();
  if (!key) fail("bad_key", "Unknown operator key");
  if (key.revoked) fail("revoked", "This operator key has been revoked");
  return { kind: "operator", orgId: key.orgId, name: key.name, operatorKeyId: key._id };
}

/** Server-allowed ∩ advertised now. A grant ending in "*" allows every capability with that prefix. */
export function effectiveCapabilities(allowed: string[], advertised: string[]): Set<string> {
  const exact = new Set(allowed.filter((g) => !g.endsWith("*")));
  const prefixes = allowed.filter((g) => g.endsWith("*")).map((g) => g.slice(0, -1));
  return new Set(advertised.filter((c) => exact.has(c) || prefixes.some((p) => c.startsWith(p))));
}

/** Resolve a job id string inside one org; anything else (malformed, missing, other org) is not found. */
export async function jobInOrg(ctx: QueryCtx, orgId: Doc<"orgs">["_id"], jobId: string) {
  const id = ctx.db.normalizeId("jobs", jobId);
  const job = id ? await ctx.db.get(id) : null;
  return job && job.orgId === orgId ? job : null;
}

/** The org's job, or the one not_found refusal every caller gives (another org's job is as unknown as none). */
export async function requireJobInOrg(ctx: QueryCtx, orgId: Doc<"orgs">["_id"], jobId: string): Promise<Doc<"jobs">> {
  const job = await jobInOrg(ctx, orgId, jobId);
  if (!job) fail("not_found", "No such job in this org");
  return job;
}
