import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * A parent's end settles its children's edges page by page (pipelines/dependencies.ts settleEdges). The first page runs in
 * the transaction that ended the parent; the rest, and every page of a child ended by a page (a cascade), run in
 * scheduled dependencies:settle pages. Each such chain keeps one row here while pages are left: a page that throws
 * leaves it behind, and the watchdog (convex/watchdog.ts) re-arms it under a new generation with a smaller page.
 * So no transaction ends more than one page of children, however deep or wide the graph below them.
 */

/** What a parent's end settles: the edges on the job `parentId`, or with `batchId` those on its batch. */
export type Settlement = { orgId: Id<"orgs">; parentId: Id<"jobs">; ok: boolean; why: string; batchId?: string };

/** Edges a page settles when nothing went wrong; each re-arm after a failed page halves it (at least one edge). */
export const EDGES_PER_PAGE = 100;

export function pageSizeAfter(stalls: number): number {
  return Math.max(1, Math.floor(EDGES_PER_PAGE / 2 ** stalls));
}

/** Schedule the settlement's next page, recording it so that a lost page is re-armed. */
export async function armSettlement(ctx: MutationCtx, s: Settlement): Promise<void> {
  const settlementId = await ctx.db.insert("settlements", {
    orgId: s.orgId,
    parentId: s.parentId,
    ok: s.ok,
    why: s.why,
    ...(s.batchId !== undefined ? { batchId: s.batchId } : {}),
    armedAt: Date.now(),
    generation: 0,
  });
  await ctx.scheduler.runAfter(0, internal.dependencies.settle, { settlementId, generation: 0 });
}

/** The row's next page is scheduled (after a page ran, or by the watchdog with a new generation). */
export async function rearmSettlement(ctx: MutationCtx, row: Doc<"settlements">, fields: { generation: number; stalls?: number }) {
  await ctx.db.patch(row._id, { armedAt: Date.now(), generation: fields.generation, stalls: fields.stalls });
  await ctx.scheduler.runAfter(0, internal.dependencies.settle, { settlementId: row._id, generation: fields.generation });
}

export function settlementOf(row: Doc<"settlements">): Settlement {
  return { orgId: row.orgId, parentId: row.parentId, ok: row.ok, why: row.why, ...(row.batchId !== undefined ? { batchId: row.batchId } : {}) };
}
