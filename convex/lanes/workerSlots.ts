import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";

/**
 * How many jobs each worker runs, kept on a row of its own (written only when one of its jobs starts or
 * stops running), so a claim or a declaration knows the worker's free slots without reading its jobs.
 */

async function slotsRow(ctx: QueryCtx, workerId: Id<"workers">): Promise<Doc<"workerSlots"> | null> {
  return await ctx.db
    .query("workerSlots")
    .withIndex("by_worker", (q) => q.eq("workerId", workerId))
    .unique();
}

/** Jobs this worker runs now. */
export async function runningCount(ctx: QueryCtx, worker: Doc<"workers">): Promise<number> {
  const row = await slotsRow(ctx, worker._id);
  if (row) return row.running;
  // a worker from before the count existed: count its jobs and instances (at most its slot limit each)
  const running = await ctx.db
    .query("jobs")
    .withIndex("by_worker_status", (q) => q.eq("workerId", worker._id).eq("status", "running"))
    .take(worker.maxConcurrentJobs + 1);
  const instances = await ctx.db
    .query("jobInstances")
    .withIndex("by_worker_status", (q) => q.eq("workerId", worker._id).eq("status", "running"))
    .take(worker.maxConcurrentJobs + 1);
  return running.length + instances.length;
}

/** `delta`: this worker's jobs that started (+) or stopped (−) running. */
export async function addRunning(ctx: MutationCtx, orgId: Id<"orgs">, workerId: Id<"workers">, delta: number): Promise<void> {
  const row = await slotsRow(ctx, workerId);
  if (row) {
    const running = Math.max(0, row.running + delta);
    // nothing runs, so nothing is frozen
    await ctx.db.patch(row._id, { running, ...(running === 0 && row.suspended ? { suspended: undefined } : {}) });
    return;
  }
  const worker = await ctx.db.get(workerId);
  const counted = worker ? await runningCount(ctx, worker) : 0;
  // the jobs that just started are already running in this transaction; one that stopped already is not
  await ctx.db.insert("workerSlots", { orgId, workerId, running: counted });
}

/**
 * What the worker says of itself, kept for the summary's worker states: the slots it declared (0: it takes nothing
 * now) and whether its running jobs are frozen. Written only when it changes.
 */
export async function noteSlotState(ctx: MutationCtx, worker: Doc<"workers">, state: { declared?: number; suspended?: boolean }): Promise<void> {
  const row = await slotsRow(ctx, worker._id);
  const declared = state.declared ?? row?.declared;
  const suspended = (state.suspended ?? row?.suspended) || undefined;
  if (row && row.declared === declared && row.suspended === suspended) return;
  if (row) await ctx.db.patch(row._id, { declared, suspended });
  else await ctx.db.insert("workerSlots", { orgId: worker.orgId, workerId: worker._id, running: await runningCount(ctx, worker), declared, suspended });
}
