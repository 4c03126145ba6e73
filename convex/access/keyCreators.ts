import type { QueryCtx } from "../_generated/server";
import type { Minter } from "./access";
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

export function madeBy(ctx: QueryCtx, minter: Minter) {
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
