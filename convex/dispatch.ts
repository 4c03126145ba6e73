import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import { backfillLane, stopWaiting } from "./lanes/demand";
import { dispatchBatch } from "./queue/dispatch";
import { recordEvent } from "./lanes/events";
import { isOfferedTo, noticeResync, withdrawOffer } from "./lanes/inbox";
import { dispatchStateOf, kickForJobs, kickSummary } from "./lanes/kick";
import { maybeFault } from "./core/faults";
import { LIMITS, TIMING } from "./core/limits";

/**
 * The org's dispatcher: the one writer that matches ready jobs with waiting workers. Kicked (lanes/kick.ts)
 * whenever a job becomes claimable while someone waits, or a worker declares free slots while work waits;
 * it runs in bounded batches and keeps rescheduling itself while its rounds find matches and work remains,
 * then goes idle and records what it saw. `generation` makes a stray second schedule a no-op, and lets the
 * watchdog (convex/watchdog.ts) re-arm a dispatcher whose run failed without two of them ever running.
 */
/**
 * A busy dispatcher whose round found no waiting worker for the ready jobs stays scheduled a little longer
 * (rounds this far apart, until this long after its last offer) instead of going idle: under saturation a
 * worker frees up within moments, and the completions that would each re-arm an idle dispatcher (writing the
 * state row every other one reads) find it still scheduled and only read it.
 */
export const LINGER_MS = 300;
export const LINGER_ROUND_MS = 25;

export const run = internalMutation({
  // `waitingBy`: when the round was scheduled; it offers only to workers waiting by then, so workers that
  // start waiting meanwhile (a stream of completions) are not in its read set. Absent: when it runs.
  // `offeredAt`: when this run of rounds last made an offer (see LINGER_MS).
  args: { orgId: v.id("orgs"), generation: v.number(), waitingBy: v.optional(v.number()), offeredAt: v.optional(v.number()) },
  handler: async (ctx, { orgId, generation, waitingBy, offeredAt }) => {
    const state = await dispatchStateOf(ctx, orgId);
    if (!state || !state.scheduled || state.generation !== generation) return { stale: true, offered: 0 };
    maybeFault("dispatch");
    const outcome = await dispatchBatch(ctx, orgId, LIMITS.dispatchBatch, waitingBy);
    if (outcome.offered > 0) await kickSummary(ctx, orgId);
    const now = Date.now();
    const lastOffer = outcome.offered > 0 ? now : offeredAt;
    const linger = !outcome.more && outcome.readyJobs && lastOffer !== undefined && now - lastOffer < LINGER_MS;
    if (outcome.more || linger) {
      // Still busy: run again after a short wait for more freed workers, and leave the state row alone, so
      // the stream of completions kicking it reads a row that does not change.
      const delay = linger ? LINGER_ROUND_MS : outcome.offered >= LIMITS.dispatchBatch ? 0 : TIMING.dispatchBatchDelayMs;
      await ctx.scheduler.runAfter(delay, internal.dispatch.run, { orgId, generation, waitingBy: now, ...(lastOffer === undefined ? {} : { offeredAt: lastOffer }) });
      // …but say it is alive now and then, so the watchdog does not take a busy dispatcher for a dead one.
      if (now - (state.armedAt ?? 0) >= TIMING.dispatchAliveEveryMs) await ctx.db.patch(state._id, { armedAt: now });
      return { stale: false, offered: outcome.offered };
    }
    await ctx.db.patch(state._id, { scheduled: false, generation: generation + 1, readyJobs: outcome.readyJobs, waiters: outcome.waiters });
    return { stale: false, offered: outcome.offered };
  },
});

/**
 * An offer was not claimed in time (the worker died, froze or lost its connection): the job goes back to the
 * ready queue in its old place and passes to another waiter; the silent worker leaves every waiting line and
 * its doorbell asks it to declare itself again.
 */
export const offerExpired = internalMutation({
  args: { jobId: v.id("jobs"), workerId: v.id("workers") },
  handler: async (ctx, { jobId, workerId }) => {
    const job = await ctx.db.get(jobId);
    if (!isOfferedTo(job, workerId)) return "gone";
    await withdrawOffer(ctx, job, { requeue: true, fromExpiryCheck: true });
    await recordEvent(ctx, job, "offer-expired", { workerId });
    await stopWaiting(ctx, workerId);
    await noticeResync(ctx, job.orgId, workerId);
    await kickForJobs(ctx, job.orgId);
    await kickSummary(ctx, job.orgId);
    return "passed on";
  },
});

/** The rest of a new lane's backfill of already-waiting workers (the submit that made it did the first page). */
export const backfill = internalMutation({
  // `after` is the last waiter's `since`, `afterCreation` its creation time (a page scheduled by an older
  // deployment has none: it goes on from the start of that millisecond, re-reading rather than skipping)
  args: { laneId: v.id("lanes"), after: v.number(), afterCreation: v.optional(v.number()) },
  handler: async (ctx, { laneId, after, afterCreation }) => {
    const lane = await ctx.db.get(laneId);
    if (!lane) return;
    const next = await backfillLane(ctx, lane, { since: after, creationTime: afterCreation ?? -1 }, LIMITS.laneBackfill);
    if (next !== null) await ctx.scheduler.runAfter(0, internal.dispatch.backfill, { laneId, after: next.since, afterCreation: next.creationTime });
    await kickForJobs(ctx, lane.orgId);
  },
});
