import { v } from "convex/values";
import { internalMutation } from "./_generated/server";
import { awaitsSeal, sealOf } from "./pipelines/batchSeals";
import { batchTotals, settleEdges } from "./pipelines/dependencies";
import { maybeFault } from "./core/faults";
import { armSettlement, pageSizeAfter, rearmSettlement, settlementOf } from "./pipelines/settlements";
import { finishJob } from "./queue/transitions";

/**
 * The next page of a parent's edges (pipelines/settlements.ts): a parent with more children than one transaction settles,
 * or one ended by another page (a cascade), goes on here, page by page, under its settlement row. A page of an older
 * generation (the watchdog re-armed the row since) does nothing. A batch's release stops if the batch has taken a job
 * since its last one ended (the children left wait for it too, as the contract says) or has a failed job (that
 * failure cancels them).
 */
export const settle = internalMutation({
  args: {
    settlementId: v.optional(v.id("settlements")),
    generation: v.optional(v.number()),
    // a page scheduled by a version before settlement rows carried the settlement in its arguments
    orgId: v.optional(v.id("orgs")),
    parentId: v.optional(v.id("jobs")),
    ok: v.optional(v.boolean()),
    why: v.optional(v.string()),
    batchId: v.optional(v.string()),
  },
  handler: async (ctx, { settlementId, generation, ...old }) => {
    if (settlementId === undefined || generation === undefined) {
      // scheduled before an upgrade: it goes on under a settlement row like any other
      if (old.orgId && old.parentId && old.ok !== undefined && old.why !== undefined) {
        await armSettlement(ctx, { orgId: old.orgId, parentId: old.parentId, ok: old.ok, why: old.why, ...(old.batchId !== undefined ? { batchId: old.batchId } : {}) });
      }
      return;
    }
    const row = await ctx.db.get(settlementId);
    if (!row || row.generation !== generation) return;
    maybeFault("settle");
    const s = settlementOf(row);
    if (s.batchId !== undefined && s.ok) {
      const totals = await batchTotals(ctx, s.orgId, s.batchId);
      if (!totals || totals.unfinished > 0 || totals.failed > 0 || awaitsSeal(await sealOf(ctx, s.orgId, s.batchId))) return await ctx.db.delete(row._id);
    }
    const { more } = await settleEdges(ctx, s, finishJob, pageSizeAfter(row.stalls ?? 0));
    // a page made smaller by a re-arm stays small: what made the full one fail is likely still there
    if (more) await rearmSettlement(ctx, row, { generation, stalls: row.stalls });
    else await ctx.db.delete(row._id);
  },
});
