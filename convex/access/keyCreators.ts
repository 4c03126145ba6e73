import { internal } from "../_generated/api";
import type { Doc } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { revokeClientKeyNow, revokeWorkerNow, type Minter } from "./access";
import type { Operator } from "./auth";
import { fail } from "../core/errors";

/**
 * Keys that made keys. Every client key, operator key and enrollment token records the key whose console call made
 * it (an operator key, or the key of a worker enrolled with canManage), and a worker the maker of its token. Revoking
 * a key revokes what it made, and what those made: a stolen key cannot leave keys of its own behind. The first page
 * goes in the revoking transaction; the rest, and each revoked key's own makings, in scheduled pages
 * (keyRevocations:revokeMinted), so a key that made thousands never needs one big transaction. Revoking a key again
 * runs its pages again.
 */

export function minterOf(me: Operator): Minter {
  return me.kind === "operator" ? me.operatorKeyId : me.workerId;
}

/**
 * A managing worker's key (a donor machine's, which the console also accepts) may make client keys and enrollment
 * tokens, but never an operator key or a key that publishes farm apps (those outrank it), and it never changes a
 * client key's share of the farm: a donor's machine must not move tenants' shares.
 */
export function refuseEscalation(me: Operator, action: "make an operator key" | "make a client key that may publish apps" | "set a client key's share of the farm"): void {
  if (me.kind === "worker") fail("forbidden", `A worker's key cannot ${action}; use an operator key (fh_o_…)`);
}

/** Rows of each kind one page revokes: workers hand their jobs back, so fewer of them. */
const KEYS_PER_PAGE = 50;
const WORKERS_PER_PAGE = 5;

function madeBy(ctx: QueryCtx, minter: Minter) {
  return {
    clientKeys: ctx.db.query("clientKeys").withIndex("by_created_by", (q) => q.eq("createdBy", minter).eq("revoked", false)),
    operatorKeys: ctx.db.query("operatorKeys").withIndex("by_created_by", (q) => q.eq("createdBy", minter).eq("revoked", false)),
    // tokens not used yet and not revoked (a used one made a worker, counted as such)
    enrollments: ctx.db.query("enrollments").withIndex("by_created_by", (q) => q.eq("createdBy", minter).eq("usedAt", undefined).eq("revokedAt", undefined)),
    workers: ctx.db.query("workers").withIndex("by_created_by", (q) => q.eq("createdBy", minter).eq("revoked", false)),
  };
}

/** What revoking this key also revokes directly (each kind counted up to `limit`; `more`: one kind has more). */
export async function mintedBy(ctx: QueryCtx, minter: Minter, limit = 100) {
  const queries = madeBy(ctx, minter);
  const counts = {
    clientKeys: (await queries.clientKeys.take(limit + 1)).length,
    operatorKeys: (await queries.operatorKeys.take(limit + 1)).length,
    enrollments: (await queries.enrollments.take(limit + 1)).length,
    workers: (await queries.workers.take(limit + 1)).length,
  };
  const more = Object.values(counts).some((n) => n > limit);
  return {
    clientKeys: Math.min(counts.clientKeys, limit),
    operatorKeys: Math.min(counts.operatorKeys, limit),
    enrollments: Math.min(counts.enrollments, limit),
    workers: Math.min(counts.workers, limit),
    more,
  };
}

async function hasMinted(ctx: QueryCtx, minter: Minter): Promise<boolean> {
  const queries = madeBy(ctx, minter);
  for (const query of [queries.clientKeys, queries.operatorKeys, queries.enrollments, queries.workers]) if (await query.first()) return true;
  return false;
}

/** A revoked key's makings are revoked in scheduled pages, if it made any that still work. */
async function cascadeLater(ctx: MutationCtx, minter: Minter): Promise<void> {
  if (await hasMinted(ctx, minter)) await ctx.scheduler.runAfter(0, internal.keyRevocations.revokeMinted, { by: minter });
}

/**
 * Revoke one page of what `minter` made (it is revoked already); a page's revoked operator keys and workers cascade in
 * their own pages. Returns how many it revoked and whether more of its own are left (the caller schedules them).
 */
export async function revokeMintedPage(ctx: MutationCtx, minter: Minter): Promise<{ revoked: number; more: boolean }> {
  const queries = madeBy(ctx, minter);
  const why = "revoked with the key that created it";
  const clientKeys = await queries.clientKeys.take(KEYS_PER_PAGE + 1);
  for (const key of clientKeys.slice(0, KEYS_PER_PAGE)) await revokeClientKeyNow(ctx, key);
  const operatorKeys = await queries.operatorKeys.take(KEYS_PER_PAGE + 1);
  for (const key of operatorKeys.slice(0, KEYS_PER_PAGE)) {
    await ctx.db.patch(key._id, { revoked: true });
    await cascadeLater(ctx, key._id);
  }
  const enrollments = await queries.enrollments.take(KEYS_PER_PAGE + 1);
  const now = Date.now();
  for (const token of enrollments.slice(0, KEYS_PER_PAGE)) await ctx.db.patch(token._id, { revokedAt: now, expiresAt: Math.min(token.expiresAt, now) });
  const workers = await queries.workers.take(WORKERS_PER_PAGE + 1);
  for (const worker of workers.slice(0, WORKERS_PER_PAGE)) {
    await revokeWorkerNow(ctx, worker, why);
    await cascadeLater(ctx, worker._id);
  }
  const pages = [clientKeys, operatorKeys, enrollments].map((rows) => rows.length > KEYS_PER_PAGE);
  const revoked = [clientKeys, operatorKeys, enrollments].reduce((n, rows) => n + Math.min(rows.length, KEYS_PER_PAGE), 0) + Math.min(workers.length, WORKERS_PER_PAGE);
  return { revoked, more: pages.some(Boolean) || workers.length > WORKERS_PER_PAGE };
}

/** After revoking `minter` itself: its first page now, the rest scheduled. How many keys the first page revoked. */
export async function revokeMinted(ctx: MutationCtx, minter: Minter): Promise<number> {
  const { revoked, more } = await revokeMintedPage(ctx, minter);
  if (more) await ctx.scheduler.runAfter(0, internal.keyRevocations.revokeMinted, { by: minter });
  return revoked;
}

/** An operator key stops working, with what it made. */
export async function revokeOperatorKeyNow(ctx: MutationCtx, key: Doc<"operatorKeys">) {
  if (!key.revoked) await ctx.db.patch(key._id, { revoked: true });
  return { alsoRevoked: await revokeMinted(ctx, key._id) };
}

/** A worker's key stops working (its jobs go back to the queue), with what it made. */
export async function revokeWorkerWithMinted(ctx: MutationCtx, worker: Doc<"workers">) {
  const { handedBack } = worker.revoked ? { handedBack: 0 } : await revokeWorkerNow(ctx, worker);
  return { handedBack, alsoRevoked: await revokeMinted(ctx, worker._id) };
}
