import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { recordEvent, noticeCancel } from "../lanes/entry";
import { finishJob } from "./transitions";

/**
 * Pending (offered included) or waiting → canceled at once. Running → flagged: the worker sees cancel:true on its next
 * heartbeat and at once through its doorbell (workers:doorbell), and its next terminal write (complete, fail
 * or release) ends the job "canceled"; if it never writes again, the lease janitor ends it "canceled" at
 * lease expiry. Finished jobs are left as they are.
 */
export async function cancelJob(ctx: MutationCtx, job: Doc<"jobs">, detail: string) {
  // a replicated job holds no lease: it ends at once, its running instances canceled (their workers told)
  if (job.status === "pending" || job.status === "waiting" || (job.status === "running" && job.validation)) {
    await finishJob(ctx, job, "canceled", { detail });
    return { status: "canceled" as const };
  }
  if (job.status === "running") {
    if (!job.cancelRequested) {
      await ctx.db.patch(job._id, { cancelRequested: true });
      await noticeCancel(ctx, job);
      await recordEvent(ctx, job, "cancel-requested", { detail });
    }
    return { status: "running" as const, cancelRequested: true };
  }
  return { status: job.status };
}
