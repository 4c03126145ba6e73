import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc } from "./_generated/dataModel";
import { internalMutation, type MutationCtx } from "./_generated/server";
import { bumpFailed } from "./lanes/counters";
import { recordEvent } from "./lanes/events";
import { kickForJobs } from "./lanes/kick";
import { settleCanceled } from "./trust/instanceCredit";
import { laneDeadlineMs } from "./trust/instanceDeadline";
import { instanceOfLease } from "./trust/instances";
import { finishJob, requeue } from "./queue/transitions";
import { failReplica, settleOrEnd } from "./queue/validationComplete";

/**
 * Lazy lease janitor: claim schedules ONE check at the lease's expiry. Heartbeats only move
 * leaseExpiresAt; when the check finds the lease extended it re-arms itself at the new expiry. A job that
 * ends before its lease cancels its check (a cancel is a write, never a run).
 */
export const checkLease = internalMutation({
  args: { jobId: v.id("jobs"), leaseId: v.string() },
  handler: async (ctx, { jobId, leaseId }) => {
    const job = await ctx.db.get(jobId);
    if (!job || job.status !== "running" || job.leaseId !== leaseId) return "gone";
    const now = Date.now();
    if (job.leaseExpiresAt !== undefined && job.leaseExpiresAt > now) {
      const leaseCheck = await ctx.scheduler.runAt(job.leaseExpiresAt, internal.janitor.checkLease, { jobId, leaseId });
      await ctx.db.patch(jobId, { leaseCheck });
      return "re-armed";
    }
    await recordEvent(ctx, job, "heartbeat-expired", { workerId: job.workerId });
    const error = `lease expired (no heartbeat for ${job.leaseMs} ms)`;
    const fromLeaseCheck = true;
    if (job.cancelRequested) await finishJob(ctx, job, "canceled", { detail: "lease expired after cancel", fromLeaseCheck });
    else {
      const retries = job.attempt < job.maxAttempts;
      await bumpFailed(ctx, job.orgId, now, { leaseExpiries: 1, retries: retries ? 1 : undefined });
      if (retries) await requeue(ctx, job, { kind: "retry", error }, undefined, { fromLeaseCheck });
      else await finishJob(ctx, job, "dead", { error, fromLeaseCheck });
    }
    return "expired";
  },
});

/**
 * The same for an instance of a replicated job (its own lease, trust/instances.ts): expired, the instance failed
 * (an error result) and another may start. Past its deadline (trust/instanceDeadline.ts) while still heart-beating,
 * it is late: it runs on, and a replacement starts beside it. The check runs at the lease's expiry or the
 * deadline, whichever comes first. A canceled instance whose worker never answered: its cancel notice goes, it
 * earns nothing.
 */
export const checkInstanceLease = internalMutation({
  args: { leaseId: v.string() },
  handler: async (ctx, { leaseId }) => {
    const row = await instanceOfLease(ctx, leaseId);
    if (!row || !(row.status === "running" || (row.status === "canceled" && !row.reported))) return "gone";
    const job = (await ctx.db.get(row.jobId))!;
    const now = Date.now();
    const fromLeaseCheck = true;
    if (row.status === "canceled") {
      if (row.leaseExpiresAt !== undefined && row.leaseExpiresAt > now) return await reArm(ctx, row, row.leaseExpiresAt);
      await settleCanceled(ctx, job, row, null, { fromLeaseCheck });
      return "expired";
    }
    if (row.leaseExpiresAt === undefined || row.leaseExpiresAt <= now) {
      await recordEvent(ctx, job, "heartbeat-expired", { workerId: row.workerId, detail: `instance ${row.n}` });
      await failReplica(ctx, job, row, `lease expired (no heartbeat for ${job.leaseMs} ms)`, undefined, { fromLeaseCheck });
      return "expired";
    }
    const deadlineAt = row.deadlineAt ?? row.startedAt + (await laneDeadlineMs(ctx, job));
    if (row.deadlineAt === undefined) await ctx.db.patch(row._id, { deadlineAt });
    if (row.late !== true && deadlineAt <= now) {
      await ctx.db.patch(row._id, { late: true });
      await recordEvent(ctx, job, "deadline-passed", { workerId: row.workerId, detail: `instance ${row.n} ran past its deadline; a replacement may start beside it` });
      await settleOrEnd(ctx, job._id);
      return await reArm(ctx, row, row.leaseExpiresAt, "late");
    }
    return await reArm(ctx, row, row.late === true ? row.leaseExpiresAt : Math.min(row.leaseExpiresAt, deadlineAt));
  },
});

async function reArm(ctx: MutationCtx, row: Doc<"jobInstances">, at: number, answer: "re-armed" | "late" = "re-armed") {
  const leaseCheck = await ctx.scheduler.runAt(at, internal.janitor.checkInstanceLease, { leaseId: row.leaseId });
  await ctx.db.patch(row._id, { leaseCheck });
  return answer;
}

/** A delayed job (delayMs/runAt or retry backoff) becomes claimable: the dispatcher hears of it. */
export const promote = internalMutation({
  args: { jobId: v.id("jobs") },
  handler: async (ctx, { jobId }) => {
    const job = await ctx.db.get(jobId);
    if (!job || job.status !== "pending" || job.queue !== "delayed") return;
    if (job.availableAt > Date.now()) {
      await ctx.scheduler.runAt(job.availableAt, internal.janitor.promote, { jobId });
      return;
    }
    await ctx.db.patch(jobId, { queue: "ready" });
    await kickForJobs(ctx, job.orgId);
    // a replicated job whose instances running meanwhile are all it wants runs on without another
    if (job.validation) await settleOrEnd(ctx, jobId);
  },
});
