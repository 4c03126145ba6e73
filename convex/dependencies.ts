import { v } from "convex/values";
import { internalMutation } from "./_generated/server";
import { batchTotals, settleEdges } from "./lib/dependencies";
import { finishJob } from "./lib/transitions";

/**
 * The next page of a parent's edges (lib/dependencies.ts settleEdges): a parent with more children than one
 * transaction settles goes on here, page by page. A batch's release stops if the batch has taken a job since its
 * last one ended (the children left wait for it too, as the contract says) or has a failed job (that failure
 * cancels them).
 */
export const settle = internalMutation({
  args: { orgId: v.id("orgs"), parentId: v.id("jobs"), ok: v.boolean(), why: v.string(), batchId: v.optional(v.string()) },
  handler: async (ctx, s) => {
    if (s.batchId !== undefined && s.ok) {
      const totals = await batchTotals(ctx, s.orgId, s.batchId);
      if (!totals || totals.unfinished > 0 || totals.failed > 0) return;
    }
    await settleEdges(ctx, s, finishJob);
  },
});
