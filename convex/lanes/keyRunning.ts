import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";

/**
 * How many jobs and instances each client key with a maxRunning runs (offered ones included). No hot row for
 * completions to fight over: a start is added to the key's `keyRunning` row by the transaction that hands the
 * job out (the dispatcher, or a claim from the lane heads), and an end only inserts a -1 into
 * `keyRunningDeltas`, which the dispatcher folds in. So the row never counts fewer than run: a key it says is
 * below its limit is below it; one it says is at its limit is looked at again with the unfolded ends
 * (`exactRunning`) before a job is held back. A key without a limit is not counted here (its running jobs are in
 * the summariser's totals, keyShards); setting a limit counts them once (queue/clientKeyLimits.ts).
 */

/** Ends younger than this are left for a later fold, so a fold never reads the range that new ends land in. */
export const KEY_FOLD_AGE_MS = 100;
/** Ends folded per dispatcher round (each is one small row read and deleted). */
export const KEY_FOLD_BATCH = 2000;
/** Unfolded ends an exact count reads at most; past it the key counts as still at its limit. */
const EXACT_READ = 500;
/** The summariser folds what the dispatcher left this old (a farm whose workers take lane heads themselves). */
export const KEY_FOLD_STALE_MS = 5_000;

export async function keyRunningRow(ctx: QueryCtx, clientKeyId: Id<"clientKeys">): Promise<Doc<"keyRunning"> | null> {
  return await ctx.db
    .query("keyRunning")
    .withIndex("by_client", (q) => q.eq("clientKeyId", clientKeyId))
    .unique();
}

/** A running job or instance of this key ended (or an offer of it was withdrawn): count it down later. */
export async function noteKeyEnded(ctx: MutationCtx, orgId: Id<"orgs">, clientKeyId: Id<"clientKeys">, count: number): Promise<void> {
  await ctx.db.insert("keyRunningDeltas", { orgId, clientKeyId, delta: -count });
}

/** Add to a key's running count (starts, by whoever hands the jobs out; folded ends). */
export async function addKeyRunning(ctx: MutationCtx, orgId: Id<"orgs">, clientKeyId: Id<"clientKeys">, delta: number): Promise<void> {
  if (delta === 0) return;
  const row = await keyRunningRow(ctx, clientKeyId);
  if (row) await ctx.db.patch(row._id, { running: row.running + delta });
  else await ctx.db.insert("keyRunning", { orgId, clientKeyId, running: delta });
}

/**
 * Fold the org's ends older than `olderThan` into the keys' rows, at most `limit` of them (oldest first).
 * Returns true when a full batch was folded (more may be left).
 */
export async function foldKeyEnds(ctx: MutationCtx, orgId: Id<"orgs">, olderThan: number, limit: number): Promise<boolean> {
  const deltas = await ctx.db
    .query("keyRunningDeltas")
    .withIndex("by_org", (q) => q.eq("orgId", orgId).lt("_creationTime", olderThan))
    .take(limit);
  const sums = new Map<Id<"clientKeys">, number>();
  for (const d of deltas) {
    sums.set(d.clientKeyId, (sums.get(d.clientKeyId) ?? 0) + d.delta);
    await ctx.db.delete(d._id);
  }
  // a key whose limit was lifted meanwhile keeps no count (a new limit counts its jobs afresh)
  for (const [clientKeyId, delta] of sums) {
    if ((await ctx.db.get(clientKeyId))?.maxRunning !== undefined) await addKeyRunning(ctx, orgId, clientKeyId, delta);
  }
  return deltas.length === limit;
}

/**
 * The key's running count with every end counted, the newest too (an at-most count: the row counts starts at
 * once and ends only once folded). Reading the newest ends puts them in the caller's read set, so a key's end
 * that commits meanwhile makes the caller run again and see it: asked only when the row says the key is at its
 * limit, that is exactly when it must.
 */
export async function exactRunning(ctx: QueryCtx, clientKeyId: Id<"clientKeys">, counted: number): Promise<number> {
  const unfolded = await ctx.db
    .query("keyRunningDeltas")
    .withIndex("by_client", (q) => q.eq("clientKeyId", clientKeyId))
    .take(EXACT_READ + 1);
  if (unfolded.length > EXACT_READ) return counted;
  return counted + unfolded.reduce((sum, d) => sum + d.delta, 0);
}
