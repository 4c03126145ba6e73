import { v } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget } from "../core/budget";
import { checkFairnessWeights, checkMaxRunning, checkWeight, FAIR, type FairnessWeight } from "./fairLimits";
import { fail } from "../core/errors";
import { kickForJobs, keyRunningRow } from "../lanes/entry";

/**
 * A client key's share of the farm (admin:setClientKeyLimits, consoleAccess:setClientKeyLimits): its weight
 * against the org's other keys, its maxRunning, and weights for some of its fairness keys. Each field left out is
 * left as it is; null puts it back to the default (weight 1, no limit, every fairness key weight 1).
 */
export const limitsFields = {
  weight: v.optional(v.union(v.number(), v.null())),
  maxRunning: v.optional(v.union(v.number(), v.null())),
  fairnessWeights: v.optional(v.union(v.array(v.object({ fairnessKey: v.string(), weight: v.number() })), v.null())),
};

export type LimitsSpec = { weight?: number | null; maxRunning?: number | null; fairnessWeights?: FairnessWeight[] | null };

/** Unfolded counter changes a recount reads at most (the summariser folds them every few seconds). */
const RECOUNT_DELTAS = 8000;

export async function applyClientKeyLimits(ctx: MutationCtx, key: Doc<"clientKeys">, spec: LimitsSpec) {
  const weight = spec.weight === undefined || spec.weight === null ? spec.weight : checkWeight(spec.weight);
  const maxRunning = spec.maxRunning === undefined || spec.maxRunning === null ? spec.maxRunning : checkMaxRunning(spec.maxRunning);
  const overrides = spec.fairnessWeights === undefined || spec.fairnessWeights === null ? spec.fairnessWeights : checkFairnessWeights(spec.fairnessWeights);
  const patch: Partial<Doc<"clientKeys">> = {};
  if (weight !== undefined) patch.weight = weight ?? undefined;
  if (maxRunning !== undefined) {
    patch.maxRunning = maxRunning ?? undefined;
    if (maxRunning === null) await dropRunningCount(ctx, key._id);
    else if (key.maxRunning === undefined) await countRunning(ctx, key);
  }
  if (overrides !== undefined) patch.fairnessOverrides = await replaceFairnessWeights(ctx, key, overrides ?? []);
  await ctx.db.patch(key._id, patch);
  // a raised limit or a new weight may let waiting jobs start now
  await kickForJobs(ctx, key.orgId);
  return await limitsOf(ctx, { ...key, ...patch });
}

/** What a key's limits are now (the fairness-key weights as a count: limitsWeights lists them). */
export async function limitsOf(ctx: QueryCtx, key: Doc<"clientKeys">) {
  return {
    clientKeyId: key._id,
    name: key.name,
    weight: key.weight ?? 1,
    maxRunning: key.maxRunning ?? null,
    fairnessWeights: key.fairnessOverrides ?? 0,
    running: key.maxRunning === undefined ? null : ((await keyRunningRow(ctx, key._id))?.running ?? 0),
  };
}

/** The key's fairness-key weights, in key order. */
export async function fairnessWeightsOf(ctx: QueryCtx, clientKeyId: Id<"clientKeys">): Promise<FairnessWeight[]> {
  const rows = await ctx.db
    .query("fairnessWeights")
    .withIndex("by_client_key", (q) => q.eq("clientKeyId", clientKeyId))
    .take(FAIR.fairnessWeightsPerKey);
  return rows.map((r) => ({ fairnessKey: r.fairnessKey, weight: r.weight }));
}

async function replaceFairnessWeights(ctx: MutationCtx, key: Doc<"clientKeys">, entries: FairnessWeight[]): Promise<number> {
  const old = await ctx.db
    .query("fairnessWeights")
    .withIndex("by_client_key", (q) => q.eq("clientKeyId", key._id))
    .take(FAIR.fairnessWeightsPerKey + 1);
  for (const row of old) await ctx.db.delete(row._id);
  for (const entry of entries) await ctx.db.insert("fairnessWeights", { orgId: key.orgId, clientKeyId: key._id, ...entry });
  return entries.length;
}

/** The limit is lifted: the key's count goes (ends still on their way are dropped when folded). */
async function dropRunningCount(ctx: MutationCtx, clientKeyId: Id<"clientKeys">): Promise<void> {
  const row = await keyRunningRow(ctx, clientKeyId);
  if (row) await ctx.db.delete(row._id);
}

/**
 * A first limit: count what the key runs now from the lanes' counters (its folded total and the changes not folded
 * yet), which count its offered and running jobs and running instances as the limit does. From here on starts and
 * ends keep the count. Ends left from an earlier limit are dropped: the counters have them.
 */
async function countRunning(ctx: MutationCtx, key: Doc<"clientKeys">): Promise<void> {
  const total = await ctx.db
    .query("keyShards")
    .withIndex("by_client", (q) => q.eq("clientKeyId", key._id))
    .unique();
  const { rows, cut } = await takeWithinBudget(
    ctx.db.query("counterDeltas").withIndex("by_org", (q) => q.eq("orgId", key.orgId)),
    RECOUNT_DELTAS + 1,
    new ByteBudget(),
  );
  if (cut || rows.length > RECOUNT_DELTAS) fail("invalid_argument", "The farm's counters are being folded: set maxRunning again in a few seconds");
  const unfolded = rows.filter((d) => d.clientKeyId === key._id).reduce((sum, d) => sum + (d.running ?? 0), 0);
  const stale = await ctx.db
    .query("keyRunningDeltas")
    .withIndex("by_client", (q) => q.eq("clientKeyId", key._id))
    .take(RECOUNT_DELTAS);
  for (const d of stale) await ctx.db.delete(d._id);
  const running = Math.max(0, (total?.running ?? 0) + unfolded);
  const row = await keyRunningRow(ctx, key._id);
  if (row) await ctx.db.patch(row._id, { running });
  else await ctx.db.insert("keyRunning", { orgId: key.orgId, clientKeyId: key._id, running });
}
