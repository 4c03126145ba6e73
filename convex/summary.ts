import { v } from "convex/values";
import { internalMutation } from "./_generated/server";
import { internal } from "./_generated/api";
import { foldDeltas, hasDeltas } from "./lanes/counters";
import { foldKeyEnds, KEY_FOLD_BATCH, KEY_FOLD_STALE_MS } from "./lanes/keyRunning";
import { maybeFault } from "./core/faults";
import { kickSummary, summaryStateOf } from "./lanes/kick";
import { computeSummary, summaryOf } from "./queue/summary";

/**
 * The summariser: rewrites the org's one summary row that farm:overview reads. Scheduled only by kicks
 * (lanes/kick.ts kickSummary), at most every few seconds while things change and never while nothing does,
 * so an open view re-runs at most once per refresh however many jobs move.
 */
export const refresh = internalMutation({
  // `all`: fold every counter change, the newest too (for an operator or a test; conflicts with submits).
  // `generation`: a scheduled refresh's; one the watchdog has since replaced (convex/watchdog.ts) does nothing.
  args: { orgId: v.id("orgs"), all: v.optional(v.boolean()), generation: v.optional(v.number()) },
  handler: async (ctx, { orgId, all, generation }) => {
    if (generation !== undefined && ((await summaryStateOf(ctx, orgId))?.generation ?? 0) !== generation) return;
    maybeFault("summary");
    const now = Date.now();
    const more = await foldDeltas(ctx, orgId, all ? Number.POSITIVE_INFINITY : now);
    // the ends of limited keys' jobs that no dispatcher round folded (it folds them first, when it runs)
    await foldKeyEnds(ctx, orgId, all ? Number.POSITIVE_INFINITY : now - KEY_FOLD_STALE_MS, KEY_FOLD_BATCH);
    const summary = await computeSummary(ctx, orgId, now);
    const existing = await summaryOf(ctx, orgId);
    if (existing) await ctx.db.replace(existing._id, summary);
    else await ctx.db.insert("summaries", summary);
    const state = await summaryStateOf(ctx, orgId);
    if (state) await ctx.db.patch(state._id, { refreshedAt: now, scheduledAt: undefined, scheduledId: undefined });
    else await ctx.db.insert("summaryStates", { orgId, refreshedAt: now });
    // Counter changes too young to fold (or a batch too many) are in the next refresh.
    if (more) await ctx.scheduler.runAfter(0, internal.summary.refresh, { orgId, generation: state?.generation ?? 0 });
    else if (await hasDeltas(ctx, orgId)) await kickSummary(ctx, orgId);
  },
});
