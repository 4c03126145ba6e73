import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { REPLICA_SKIPS } from "./claim";
import { downloadSizes, fitsBytes } from "./downloadBytes";
import { bumpLane, offerJob, foldKeyEnds, KEY_FOLD_AGE_MS, KEY_FOLD_BATCH, orgLanes } from "../lanes/entry";
import { FairRound } from "./fairRound";
import { mayRun } from "../trust/entry";

export type DispatchOutcome = {
  offered: number;
  /** Run another round: the batch ran out, or it made offers and work is left, or workers came meanwhile. */
  more: boolean;
  /** A ready job is left that no waiting worker could take. */
  readyJobs: boolean;
  /** Some worker of the org still waits. */
  waiters: boolean;
};

/**
 * The oldest worker waiting in this lane since before this round was scheduled (`before`) that still wants a
 * job; stale rows on the way are removed. Reading only up to `before` keeps workers that start waiting after
 * the round was scheduled (completions declaring their freed slot) out of its read set, so they do not make
 * it retry; the round's end looks for them and runs another round for them.
 */
async function oldestWaiter(ctx: MutationCtx, laneId: Id<"lanes">, before: number): Promise<Doc<"waiters"> | null> {
  for (;;) {
    const row = await ctx.db
      .query("laneWaiters")
      .withIndex("by_lane_since", (q) => q.eq("laneId", laneId).lte("since", before))
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
 * The oldest waiting worker of the lane that may run this job: for a replicated job, one that has not run an
 * instance of it (on another machine, of the same platform if it must be); for any job, one that may still download
 * it (a worker on a metered connection declares how much); looked for among the first REPLICA_SKIPS.
 */
async function waiterFor(ctx: MutationCtx, job: Doc<"jobs">, laneId: Id<"lanes">, before: number, size: Sizes): Promise<Doc<"waiters"> | "others" | null> {
  if (!job.validation) {
    const oldest = await oldestWaiter(ctx, laneId, before);
    if (oldest === null || (await mayDownload(oldest, job, size))) return oldest;
  }
  const rows = await ctx.db
    .query("laneWaiters")
    .withIndex("by_lane_since", (q) => q.eq("laneId", laneId).lte("since", before))
    .take(REPLICA_SKIPS);
  for (const row of rows) {
    const waiter = await ctx.db
      .query("waiters")
      .withIndex("by_worker", (q) => q.eq("workerId", row.workerId))
      .unique();
    if (!waiter || waiter.wants <= 0) continue;
    if (!(await mayDownload(waiter, job, size))) continue;
    if (!job.validation) return waiter;
    const worker = await ctx.db.get(row.workerId);
    if (worker && mayRun(job, worker)) return waiter;
  }
  // "others": workers wait here, but none may run (or download) this one (a later job of the lane may suit them)
  return rows.length > 0 ? "others" : null;
}

type Sizes = (job: Doc<"jobs">) => Promise<number>;

/** The waiter may still download the job (its size is looked at only for a waiter with a limit). */
async function mayDownload(waiter: Doc<"waiters">, job: Doc<"jobs">, size: Sizes): Promise<boolean> {
  return waiter.bytesLeft === undefined || fitsBytes(waiter.bytesLeft, await size(job));
}

/**
 * One round of the org's dispatcher, the only transaction that reads lane heads and waiting workers together:
 * take the ready lane heads in order — priority first, then fair share between client keys and their fairness
 * keys, FIFO inside one (queue/fairRound.ts) — and offer each to the oldest waiting worker that can run it, at most
 * `budget` offers. A client key at its maxRunning is held back. Counters move pending → running once per lane
 * and key; the keys' running counts take this round's offers and the ends folded at its start.
 */
export async function dispatchBatch(ctx: MutationCtx, orgId: Id<"orgs">, budget: number, waitingBy?: number): Promise<DispatchOutcome> {
  const now = Date.now();
  // Waiters the round may offer to: those waiting when it was scheduled (see dispatch.ts `waitingBy`).
  const before = Math.min(now, waitingBy ?? now);
  await foldKeyEnds(ctx, orgId, now - KEY_FOLD_AGE_MS, KEY_FOLD_BATCH);
  const round = await FairRound.open(ctx, orgId, await orgLanes(ctx, orgId), now);
  const offeredPer = new Map<string, { laneId: Id<"lanes">; clientKeyId?: Id<"clientKeys">; keyCounted?: boolean; count: number }>();
  let offered = 0;
  let readyJobs = false;
  let more = false;
  let replicaSkips = 0;
  const size = downloadSizes(ctx);
  for (;;) {
    // every lane offered to its end, or left for want of waiters
    const flow = await round.next();
    if (flow === null) break;
    if (offered >= budget) {
      more = true;
      readyJobs = true;
      break;
    }
    const job = flow.head!;
    const laneId = flow.lane.lane._id;
    const waiter = await waiterFor(ctx, job, laneId, before, size);
    if (waiter === null || waiter === "others") {
      readyJobs = true;
      // a replicated job nobody waiting may run stays ready, and the flow's next job is looked at
      if (waiter === "others" && ++replicaSkips <= REPLICA_SKIPS) await round.skip(flow);
      // nobody waits for this lane: its jobs stay ready
      else round.dropLane(flow);
      continue;
    }
    await offerJob(ctx, job, waiter, now, waiter.bytesLeft === undefined ? 0 : await size(job));
    await round.took(flow);
    offered++;
    const tally = `${laneId}|${job.clientKeyId ?? ""}|${job.keyCounted === true}`;
    offeredPer.set(tally, { laneId, clientKeyId: job.clientKeyId, keyCounted: job.keyCounted, count: (offeredPer.get(tally)?.count ?? 0) + 1 });
  }
  // a key held back at its limit, or flows past what one round reads, leave ready jobs
  if (round.limited || round.cut) readyJobs = true;
  await round.save();
  for (const { laneId, clientKeyId, keyCounted, count } of offeredPer.values()) {
    await bumpLane(ctx, { orgId, laneId, clientKeyId, keyCounted }, { pending: -count, running: count });
  }
  if (more || (offered > 0 && readyJobs)) return { offered, more: true, readyJobs, waiters: true };
  // About to go idle: now look at every waiting worker, those who came during the round included (a
  // concurrent new waiter makes this round retry, or sees the idle state it writes and kicks again).
  const anyWaiter = await ctx.db
    .query("waiters")
    .withIndex("by_org_since", (q) => q.eq("orgId", orgId).gte("since", 0))
    .first();
  const newcomer = await ctx.db
    .query("waiters")
    .withIndex("by_org_since", (q) => q.eq("orgId", orgId).gt("since", before))
    .first();
  // Workers that came during the round while work is left: another round, not idle.
  return { offered, more: readyJobs && newcomer !== null, readyJobs, waiters: anyWaiter !== null };
}
