import { v } from "convex/values";
import { internalMutation } from "./_generated/server";
import { summaryStateOf } from "./lib/kick";
import { computeSummary, summaryOf } from "./lib/summary";

/**
 * The summariser: rewrites the org's one summary row that farm:overview reads. Scheduled only by kicks
 * (lib/kick.ts kickSummary), at most every few seconds while things change and never while nothing does,
 * so an open view re-runs at most once per refresh however many jobs move.
 */
export const refresh = internalMutation({
  args: { orgId: v.id("orgs") },
  handler: async (ctx, { orgId }) => {
    const now = Date.now();
    const summary = await computeSummary(ctx, orgId, now);
    const existing = await summaryOf(ctx, orgId);
    if (existing) await ctx.db.replace(existing._id, summary);
    else await ctx.db.insert("summaries", summary);
    const state = await summaryStateOf(ctx, orgId);
    if (state) await ctx.db.patch(state._id, { refreshedAt: now, scheduledAt: undefined, scheduledId: undefined });
    else await ctx.db.insert("summaryStates", { orgId, refreshedAt: now });
  },
});
