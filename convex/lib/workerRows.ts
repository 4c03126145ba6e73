import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * Deleting a revoked worker for good: when its machine joins again (workers:enroll with the same machineId
 * replaces it, so leaving and joining does not pile up rows) or when the retention sweep finds it revoked for
 * longer than the retention age. Its rows beside it go too — presence, waiting lines, slot count, doorbell,
 * credit — except that a successor (the same machine's new worker) inherits its credit. Jobs and events that
 * name it keep its id (they show it as a worker that no longer exists). Every read is bounded by design: one
 * row per worker, or a worker's lanes, doorbell or retained days.
 */

const ROWS_PER_TABLE = 500;

export async function deleteRevokedWorker(ctx: MutationCtx, worker: Doc<"workers">, successor?: Id<"workers">): Promise<void> {
  if (!worker.revoked) throw new Error("only a revoked worker is deleted");
  const workerId = worker._id;
  const beside = [
    ...(await ctx.db.query("presence").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("workerSlots").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("laneWaiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
    ...(await ctx.db.query("inbox").withIndex("by_worker_kind", (q) => q.eq("workerId", workerId)).take(ROWS_PER_TABLE)),
  ];
  for (const row of beside) await ctx.db.delete(row._id);
  const days = await ctx.db
    .query("creditDays")
    .withIndex("by_worker_day", (q) => q.eq("workerId", workerId))
    .take(ROWS_PER_TABLE);
  const total = await ctx.db
    .query("creditTotals")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .unique();
  if (successor) {
    for (const day of days) {
      const theirs = await ctx.db
        .query("creditDays")
        .withIndex("by_worker_day", (q) => q.eq("workerId", successor).eq("day", day.day))
        .unique();
      if (theirs) {
        await ctx.db.patch(theirs._id, sum(theirs, day));
        await ctx.db.delete(day._id);
      } else await ctx.db.patch(day._id, { workerId: successor });
    }
    if (total) {
      const theirs = await ctx.db
        .query("creditTotals")
        .withIndex("by_worker", (q) => q.eq("workerId", successor))
        .unique();
      if (theirs) {
        await ctx.db.patch(theirs._id, sum(theirs, total));
        await ctx.db.delete(total._id);
      } else await ctx.db.patch(total._id, { workerId: successor });
    }
  } else {
    for (const day of days) await ctx.db.delete(day._id);
    if (total) await ctx.db.delete(total._id);
  }
  await ctx.db.delete(workerId);
}

type Credit = { cpuMs: number; wallMs: number; jobs: number; failed: number; energyJ?: number };

function sum(a: Credit, b: Credit): Credit {
  const energyJ = (a.energyJ ?? 0) + (b.energyJ ?? 0);
  return { cpuMs: a.cpuMs + b.cpuMs, wallMs: a.wallMs + b.wallMs, jobs: a.jobs + b.jobs, failed: a.failed + b.failed, ...(energyJ ? { energyJ } : {}) };
}

/** Revoked workers of this machine that a new enrollment replaces (at most a few: each enrollment replaces them). */
export async function revokedOfMachine(ctx: MutationCtx, orgId: Id<"orgs">, machineId: string): Promise<Doc<"workers">[]> {
  const rows = await ctx.db
    .query("workers")
    .withIndex("by_org_machine", (q) => q.eq("orgId", orgId).eq("machineId", machineId))
    .take(50);
  return rows.filter((w) => w.revoked);
}
