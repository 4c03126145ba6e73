import { compareValues } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import type { ByteBudget } from "../core/budget";

/**
 * A lane's ready queue in the `by_lane_fair` index: by priority level, then per flow — one client key and one
 * fairness key — in FIFO order. A round never reads the queue: it reads each flow's head, skipping from one flow
 * to the next with one index read each (O(flows), whatever their depth), and a flow's next job only once its head
 * was taken.
 */

export type FlowKey = { clientKeyId?: Id<"clientKeys">; fairnessKey?: string };

function flowKeyOf(job: Doc<"jobs">): FlowKey {
  return { clientKeyId: job.clientKeyId, fairnessKey: job.fairnessKey };
}

/** Index order of two flows (absent fields first, then Convex's own order of ids and strings). */
export function compareFlows(a: FlowKey, b: FlowKey): number {
  return compareValues(a.clientKeyId, b.clientKeyId) || compareValues(a.fairnessKey, b.fairnessKey);
}

/** The lane's first ready job (its highest priority level's first flow's head), or of a lower level than `below`. */
export async function firstReady(ctx: QueryCtx, laneId: Id<"lanes">, below?: number): Promise<Doc<"jobs"> | null> {
  return await ctx.db
    .query("jobs")
    .withIndex("by_lane_fair", (q) => (below === undefined ? q.eq("laneId", laneId).eq("queue", "ready") : q.eq("laneId", laneId).eq("queue", "ready").gt("negPriority", below)))
    .first();
}

/** The head of the flow after `after` at this level, or null past the last. */
async function nextFlowHead(ctx: QueryCtx, laneId: Id<"lanes">, negPriority: number, after: FlowKey): Promise<Doc<"jobs"> | null> {
  const level = () => ctx.db.query("jobs");
  const sameKey = await level()
    .withIndex("by_lane_fair", (q) =>
      q.eq("laneId", laneId).eq("queue", "ready").eq("negPriority", negPriority).eq("clientKeyId", after.clientKeyId).gt("fairnessKey", after.fairnessKey),
    )
    .first();
  if (sameKey) return sameKey;
  return await level()
    .withIndex("by_lane_fair", (q) => q.eq("laneId", laneId).eq("queue", "ready").eq("negPriority", negPriority).gt("clientKeyId", after.clientKeyId))
    .first();
}

/**
 * The flows of one level, from the one after `start` round to the one before it again (from the first, without
 * `start`), as far as `maxFlows` and the byte budget go. `first`: the level's first head, read already. `cut`: it
 * stopped early, after `last`.
 */
export async function levelFlows(
  ctx: QueryCtx,
  first: Doc<"jobs">,
  start: FlowKey | null,
  maxFlows: number,
  budget: ByteBudget,
): Promise<{ heads: Doc<"jobs">[]; cut: boolean; last: FlowKey | null }> {
  const { laneId, negPriority } = first;
  const heads: Doc<"jobs">[] = [];
  let after = start;
  let wrapped = start === null;
  for (;;) {
    if (heads.length >= maxFlows || budget.exhausted) return { heads, cut: true, last: after };
    const head = after === null ? first : await nextFlowHead(ctx, laneId, negPriority, after);
    if (head === null) {
      if (wrapped) return { heads, cut: false, last: after };
      wrapped = true;
      after = null;
      continue;
    }
    const key = flowKeyOf(head);
    // round again at the flow it started after: every flow of the level was read
    if (start !== null && wrapped && compareFlows(key, start) > 0) return { heads, cut: false, last: after };
    budget.charge(head);
    heads.push(head);
    after = key;
  }
}

/**
 * A flow's jobs after its head, in order: those ready at the same time but inserted later, then the later ones.
 * The range read starts right after the head, so a claim of the head's successor reads no job it passes.
 */
export async function* flowAfter(ctx: QueryCtx, head: Doc<"jobs">): AsyncGenerator<Doc<"jobs">> {
  const flow = (part: "sameTime" | "later") =>
    ctx.db.query("jobs").withIndex("by_lane_fair", (q) => {
      const inFlow = q
        .eq("laneId", head.laneId)
        .eq("queue", "ready")
        .eq("negPriority", head.negPriority)
        .eq("clientKeyId", head.clientKeyId)
        .eq("fairnessKey", head.fairnessKey);
      return part === "sameTime" ? inFlow.eq("availableAt", head.availableAt).gt("_creationTime", head._creationTime) : inFlow.gt("availableAt", head.availableAt);
    });
  for await (const job of flow("sameTime")) yield job;
  for await (const job of flow("later")) yield job;
}
