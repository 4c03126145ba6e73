import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * A replicated job's progress and status text, as jobs:get shows them, are those of its leading running instance:
 * the first to report, replaced by another only once that one is OVERTAKE ahead (or, once the leader ended, by the
 * next to report).
 * So an instance heartbeat writes the job row only when the leader's progress or text changed, or the lead
 * changed hands: instances running neck and neck do not take turns rewriting the job row, and at most one
 * instance writes it per heartbeat round, as a single job's heartbeat does.
 */
export const OVERTAKE = 0.05;

/** An instance's heartbeat said this (the instance row already took it): the job row follows its leader. */
export async function showInstanceProgress(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  instance: Doc<"jobInstances">,
  said: { progress?: number; statusText?: string },
): Promise<void> {
  if (said.progress === undefined && said.statusText === undefined) return;
  const leads = job.progressInstance === instance._id;
  const takesOver = !leads && (job.progressInstance === undefined || (said.progress !== undefined && said.progress >= (job.progress ?? 0) + OVERTAKE));
  if (!leads && !takesOver) return;
  const progress = said.progress ?? instance.progress;
  const statusText = said.statusText ?? instance.statusText;
  const patch: Partial<Doc<"jobs">> = {};
  if (takesOver) patch.progressInstance = instance._id;
  if (progress !== job.progress) patch.progress = progress;
  if (statusText !== job.statusText) patch.statusText = statusText;
  if (Object.keys(patch).length > 0) await ctx.db.patch(job._id, patch);
}

/**
 * The instance stopped running (a result, a failure, a cancel): if it led, the job's progress is left as it was
 * until another running instance reports, which then leads at once.
 */
export async function dropProgressLead(ctx: MutationCtx, job: Doc<"jobs">, instance: Doc<"jobInstances">): Promise<void> {
  if (job.progressInstance === instance._id) await ctx.db.patch(job._id, { progressInstance: undefined });
}
