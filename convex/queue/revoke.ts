import { internal } from "../_generated/api";
import type { Doc } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { madeBy, type Minter } from "../access/entry";
import { LIMITS } from "../core/limits";
import { inboxRows, isOfferedTo, kickForJobs, kickSummary, presenceOf, stopWaiting, withdrawOffer } from "../lanes/entry";
import { pauseSchedulesOfKey } from "../pipelines/entry";
import { finishJob, requeue } from "./transitions";
import { releaseReplica } from "./validationComplete";

/**
 * Revoking keys and workers, and what revoking ends in every domain: a worker's jobs, instances, offers, presence
 * and waiting; a client key's schedules; the keys a key made (access/keyCreators.ts), in scheduled pages
 * (keyRevocations:revokeMinted). Here, at the top of the domains, because it reaches all of them.
 */

/** The client key stops working on its next call; its schedules pause, saying why (they would submit nothing). */
export async function revokeClientKeyNow(ctx: MutationCtx, key: Doc<"clientKeys">) {
  if (!key.revoked) await ctx.db.patch(key._id, { revoked: true });
  return { schedulesPaused: await pauseSchedulesOfKey(ctx, key, LIMITS.schedulesPerOrg) };
}

/**
 * The key stops working on its next call, and the worker's jobs go back to the queue at once: running ones
 * without burning an attempt (a cancel-requested one ends canceled), offered ones to the next waiter. Its row
 * counts as offline from now on (a revoked worker is never online). `why`: the jobs' event detail (an operator's
 * revoke, or the machine leaving with workers:leave).
 */
export async function revokeWorkerNow(ctx: MutationCtx, worker: Doc<"workers">, why = "worker revoked") {
  const workerId = worker._id;
  await ctx.db.patch(workerId, { revoked: true, revokedAt: Date.now() });
  // out of every workers list at once (lists read presence, online first); the row itself goes with retention
  const seen = await presenceOf(ctx, workerId);
  if (seen) await ctx.db.delete(seen._id);
  const running = await ctx.db
    .query("jobs")
    .withIndex("by_worker_status", (q) => q.eq("workerId", workerId).eq("status", "running"))
    .take(LIMITS.maxConcurrentJobs);
  for (const job of running) {
    if (job.cancelRequested) await finishJob(ctx, job, "canceled", { workerId, detail: `${why} after cancel` });
    else await requeue(ctx, job, { kind: "release", detail: why }, workerId);
  }
  // its instances of replicated jobs: another machine may run each in its place
  const instances = await ctx.db
    .query("jobInstances")
    .withIndex("by_worker_status", (q) => q.eq("workerId", workerId).eq("status", "running"))
    .take(LIMITS.maxConcurrentJobs);
  for (const row of instances) {
    const job = await ctx.db.get(row.jobId);
    if (job) await releaseReplica(ctx, job, row, workerId, why);
  }
  let handedBack = running.length + instances.length;
  for (const offer of await inboxRows(ctx, workerId, "offer")) {
    const job = offer.jobId ? await ctx.db.get(offer.jobId) : null;
    if (isOfferedTo(job, workerId)) {
      await withdrawOffer(ctx, job, { requeue: true });
      handedBack++;
    }
  }
  for (const kind of ["cancel", "resync"] as const) {
    for (const row of await inboxRows(ctx, workerId, kind)) await ctx.db.delete(row._id);
  }
  await stopWaiting(ctx, workerId);
  if (handedBack > 0) await kickForJobs(ctx, worker.orgId);
  await kickSummary(ctx, worker.orgId);
  return { handedBack };
}

/** Rows of each kind one page revokes: workers hand their jobs back, so fewer of them. */
const KEYS_PER_PAGE = 50;
const WORKERS_PER_PAGE = 5;

async function hasMinted(ctx: QueryCtx, minter: Minter): Promise<boolean> {
  const queries = madeBy(ctx, minter);
  for (const query of [queries.clientKeys, queries.operatorKeys, queries.enrollments, queries.workers]) if (await query.first()) return true;
  return false;
}

/** A revoked key's makings are revoked in scheduled pages, if it made any that still work. */
async function cascadeLater(ctx: MutationCtx, minter: Minter): Promise<void> {
  if (await hasMinted(ctx, minter)) await ctx.scheduler.runAfter(0, internal.keyRevocations.revokeMinted, { by: minter });
}

/**
 * Revoke one page of what `minter` made (it is revoked already); a page's revoked operator keys and workers cascade in
 * their own pages. Returns how many it revoked and whether more of its own are left (the caller schedules them).
 */
export async function revokeMintedPage(ctx: MutationCtx, minter: Minter): Promise<{ revoked: number; more: boolean }> {
  const queries = madeBy(ctx, minter);
  const why = "revoked with the key that created it";
  const clientKeys = await queries.clientKeys.take(KEYS_PER_PAGE + 1);
  for (const key of clientKeys.slice(0, KEYS_PER_PAGE)) await revokeClientKeyNow(ctx, key);
  const operatorKeys = await queries.operatorKeys.take(KEYS_PER_PAGE + 1);
  for (const key of operatorKeys.slice(0, KEYS_PER_PAGE)) {
    await ctx.db.patch(key._id, { revoked: true });
    await cascadeLater(ctx, key._id);
  }
  const enrollments = await queries.enrollments.take(KEYS_PER_PAGE + 1);
  const now = Date.now();
  for (const token of enrollments.slice(0, KEYS_PER_PAGE)) await ctx.db.patch(token._id, { revokedAt: now, expiresAt: Math.min(token.expiresAt, now) });
  const workers = await queries.workers.take(WORKERS_PER_PAGE + 1);
  for (const worker of workers.slice(0, WORKERS_PER_PAGE)) {
    await revokeWorkerNow(ctx, worker, why);
    await cascadeLater(ctx, worker._id);
  }
  const pages = [clientKeys, operatorKeys, enrollments].map((rows) => rows.length > KEYS_PER_PAGE);
  const revoked = [clientKeys, operatorKeys, enrollments].reduce((n, rows) => n + Math.min(rows.length, KEYS_PER_PAGE), 0) + Math.min(workers.length, WORKERS_PER_PAGE);
  return { revoked, more: pages.some(Boolean) || workers.length > WORKERS_PER_PAGE };
}

/** After revoking `minter` itself: its first page now, the rest scheduled. How many keys the first page revoked. */
export async function revokeMinted(ctx: MutationCtx, minter: Minter): Promise<number> {
  const { revoked, more } = await revokeMintedPage(ctx, minter);
  if (more) await ctx.scheduler.runAfter(0, internal.keyRevocations.revokeMinted, { by: minter });
  return revoked;
}

/** An operator key stops working, with what it made. */
export async function revokeOperatorKeyNow(ctx: MutationCtx, key: Doc<"operatorKeys">) {
  if (!key.revoked) await ctx.db.patch(key._id, { revoked: true });
  return { alsoRevoked: await revokeMinted(ctx, key._id) };
}

/** A worker's key stops working (its jobs go back to the queue), with what it made. */
export async function revokeWorkerWithMinted(ctx: MutationCtx, worker: Doc<"workers">) {
  const { handedBack } = worker.revoked ? { handedBack: 0 } : await revokeWorkerNow(ctx, worker);
  return { handedBack, alsoRevoked: await revokeMinted(ctx, worker._id) };
}
