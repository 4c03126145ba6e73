import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { compareJobs, laneHead } from "./claim";
import { bumpLane } from "./counters";
import { offerJob } from "./inbox";
import { orgLanes } from "./lanes";

type Head = { lane: Doc<"lanes">; job: Doc<"jobs"> };

export type DispatchOutcome = {
  offered: number;
  /** The batch ran out while matches may remain: run again. */
  more: boolean;
  /** A ready job is left that no waiting worker could take. */
  readyJobs: boolean;
  /** Some worker of the org still waits. */
  waiters: boolean;
};

/** The oldest worker waiting in this lane that still wants a job; stale rows on the way are removed. */
async function oldestWaiter(ctx: MutationCtx, laneId: Id<"lanes">): Promise<Doc<"waiters"> | null> {
  for (;;) {
    const row = await ctx.db
      .query("laneWaiters")
      .withIndex("by_lane_since", (q) => q.eq("laneId", laneId))
      .first();
    if (!row) return null;
    const waiter = await ctx.db
      .query("waiters")
      .withIndex("by_worker", (q) => q.eq("workerId", row.workerId))
      .unique();
    if (waiter && waiter.wants > 0) return waiter;
    await ctx.db.delete(row._id);
  }
}

/**
 * One round of the org's dispatcher, the only transaction that reads lane heads and waiting workers together:
 * take the ready lane heads in strict order (priority desc, then FIFO) and offer each to the oldest waiting
 * worker that can run it, at most `budget` offers. Counters move pending → running once per lane.
 */
export async function dispatchBatch(ctx: MutationCtx, orgId: Id<"orgs">, budget: number): Promise<DispatchOutcome> {
  const now = Date.now();
  const heads: Head[] = [];
  for (const lane of await orgLanes(ctx, orgId)) {
    const job = await laneHead(ctx, lane._id);
    if (job) heads.push({ lane, job });
  }
  const offeredPerLane = new Map<Id<"lanes">, { lane: Doc<"lanes">; count: number }>();
  let offered = 0;
  let readyJobs = false;
  let more = false;
  while (heads.length > 0) {
    if (offered >= budget) {
      more = true;
      readyJobs = true;
      break;
    }
    heads.sort((a, b) => compareJobs(a.job, b.job));
    const head = heads.shift()!;
    const waiter = await oldestWaiter(ctx, head.lane._id);
    if (!waiter) {
      readyJobs = true;
      continue;
    }
    await offerJob(ctx, head.job, waiter, now);
    offered++;
    const tally = offeredPerLane.get(head.lane._id) ?? { lane: head.lane, count: 0 };
    offeredPerLane.set(head.lane._id, { lane: head.lane, count: tally.count + 1 });
    const next = await laneHead(ctx, head.lane._id);
    if (next) heads.push({ lane: head.lane, job: next });
  }
  for (const { lane, count } of offeredPerLane.values()) {
    await bumpLane(ctx, { orgId, laneId: lane._id }, { pending: -count, running: count });
  }
  const anyWaiter = await ctx.db
    .query("waiters")
    .withIndex("by_org_since", (q) => q.eq("orgId", orgId).gte("since", 0))
    .first();
  return { offered, more, readyJobs, waiters: anyWaiter !== null };
}
