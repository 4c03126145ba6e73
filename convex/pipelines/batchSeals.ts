import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { fail } from "../core/errors";

/**
 * Sealed batches. A batch submitted in several calls (the SDK's submitMany in chunks) may look finished between two
 * calls: every job so far has ended, and its children would start with part of their inputs. A submitter that says
 * `seal` (true on the last call, false on the others) makes the batch wait for its seal: its children are released
 * only once it is sealed and every job of it has succeeded, and a sealed batch takes no more jobs. A batch never
 * submitted with `seal` behaves as before: its children are released whenever all of its jobs so far have succeeded.
 */

export async function sealOf(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string): Promise<Doc<"batchSeals"> | null> {
  return await ctx.db
    .query("batchSeals")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
    .unique();
}

/** The batch waits for its seal: its children are not released yet, whatever its jobs did. */
export function awaitsSeal(seal: Doc<"batchSeals"> | null): boolean {
  return seal !== null && seal.sealedAt === undefined;
}

/** A job may join the batch only while it is not sealed. */
export async function refuseIfSealed(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string): Promise<void> {
  const seal = await sealOf(ctx, orgId, batchId);
  if (seal?.sealedAt !== undefined) fail("invalid_argument", `batch ${JSON.stringify(batchId)} is sealed: it takes no more jobs`);
}

/** The batch is to be sealed: from now on its children wait for the seal. */
export async function expectSeal(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string): Promise<void> {
  if (!(await sealOf(ctx, orgId, batchId))) await ctx.db.insert("batchSeals", { orgId, batchId });
}

/** Seal the batch; false when it was sealed already. */
export async function sealNow(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string): Promise<boolean> {
  const seal = await sealOf(ctx, orgId, batchId);
  if (seal?.sealedAt !== undefined) return false;
  if (seal) await ctx.db.patch(seal._id, { sealedAt: Date.now() });
  else await ctx.db.insert("batchSeals", { orgId, batchId, sealedAt: Date.now() });
  return true;
}
