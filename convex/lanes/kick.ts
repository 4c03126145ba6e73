import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { TIMING } from "../core/limits";
import { cancelIfPending } from "./scheduled";

/**
 * Kicks: the only way anything but the dispatcher and the summariser touches their per-org state rows.
 * A kick reads one small row and writes it only when the state must change (idle → scheduled, or a flag
 * that is not yet set), so a burst of submits or completions mostly just reads it. Why this never loses a
 * wake-up under Convex's optimistic concurrency is in docs/API.md ("How the queue stays fast").
 */

export async function dispatchStateOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"dispatchStates"> | null> {
  return await ctx.db
    .query("dispatchStates")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .unique();
}

/** The org's dispatch state, created on first use for an org made before it existed. */
export async function ensureDispatchState(ctx: MutationCtx, orgId: Id<"orgs">): Promise<Doc<"dispatchStates">> {
  const row = await dispatchStateOf(ctx, orgId);
  if (row) return row;
  const id = await ctx.db.insert("dispatchStates", { orgId, scheduled: false, generation: 0, readyJobs: false, waiters: false });
  return (await ctx.db.get(id))!;
}

async function scheduleDispatch(ctx: MutationCtx, state: Doc<"dispatchStates">) {
  await ctx.db.patch(state._id, { scheduled: true, armedAt: Date.now() });
  await ctx.scheduler.runAfter(0, internal.dispatch.run, { orgId: state.orgId, generation: state.generation, waitingBy: Date.now() });
}

/** Jobs became claimable (submit, promotion, release, expiry, retry): wake the dispatcher if a worker waits. */
export async function kickForJobs(ctx: MutationCtx, orgId: Id<"orgs">): Promise<void> {
  const state = await ensureDispatchState(ctx, orgId);
  if (state.scheduled) return;
  if (state.waiters) return await scheduleDispatch(ctx, state);
  // Nobody waits: remember that work is there, so the next worker to declare free slots wakes the dispatcher.
  if (!state.readyJobs) await ctx.db.patch(state._id, { readyJobs: true });
}

/** A worker declared free slots without reading the lane heads: wake the dispatcher if work may be there. */
export async function kickForWaiter(ctx: MutationCtx, orgId: Id<"orgs">): Promise<void> {
  const state = await ensureDispatchState(ctx, orgId);
  if (state.scheduled) return;
  if (state.readyJobs) return await scheduleDispatch(ctx, state);
  if (!state.waiters) await ctx.db.patch(state._id, { waiters: true });
}

/**
 * A worker records itself waiting right after reading every lane head it can serve and finding nothing to
 * take: no dispatch can help it now, but the next job that becomes ready must wake the dispatcher.
 */
export async function noteWaiter(ctx: MutationCtx, orgId: Id<"orgs">): Promise<void> {
  const state = await ensureDispatchState(ctx, orgId);
  if (!state.scheduled && !state.waiters) await ctx.db.patch(state._id, { waiters: true });
}

export async function summaryStateOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"summaryStates"> | null> {
  return await ctx.db
    .query("summaryStates")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .unique();
}

/**
 * Something farm:overview shows changed: make sure the summariser runs soon — `change`: within
 * summaryFirstDelayMs of a quiet spell, then at most every summaryMinGapMs; `presence`: within
 * summaryPresenceDelayMs (a worker's lastSeenAt moved, nothing else), so an idle farm's presence calls
 * share one refresh. A refresh already planned soon enough is left alone; a later one is moved forward.
 */
export async function kickSummary(ctx: MutationCtx, orgId: Id<"orgs">, reason: "change" | "presence" = "change"): Promise<void> {
  const now = Date.now();
  let state = await summaryStateOf(ctx, orgId);
  if (!state) {
    const id = await ctx.db.insert("summaryStates", { orgId, refreshedAt: 0 });
    state = (await ctx.db.get(id))!;
  }
  const delay = reason === "change" ? TIMING.summaryFirstDelayMs : TIMING.summaryPresenceDelayMs;
  const due = Math.max(now + delay, state.refreshedAt + TIMING.summaryMinGapMs);
  if (state.scheduledAt !== undefined && state.scheduledAt <= due) return;
  if (state.scheduledId) await cancelIfPending(ctx, state.scheduledId);
  const scheduledId = await ctx.scheduler.runAt(due, internal.summary.refresh, { orgId, generation: state.generation ?? 0 });
  await ctx.db.patch(state._id, { scheduledAt: due, scheduledId });
}
