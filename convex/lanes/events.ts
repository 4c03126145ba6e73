import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

export type EventKind =
  | "submitted"
  | "claimed"
  | "released"
  | "offer-expired"
  | "heartbeat-expired"
  | "retried"
  | "failed"
  | "dead"
  | "cancel-requested"
  | "canceled"
  | "done"
  // a waiting job's parents have all succeeded: it is pending now
  | "dependencies-met"
  // an instance of a replicated job ran past its deadline: a replacement may start beside it
  | "deadline-passed";

export async function recordEvent(
  ctx: MutationCtx,
  job: Pick<Doc<"jobs">, "_id" | "orgId" | "attempt">,
  kind: EventKind,
  extra: { workerId?: Id<"workers">; detail?: string; backoffMs?: number } = {},
) {
  await ctx.db.insert("jobEvents", {
    orgId: job.orgId,
    jobId: job._id,
    kind,
    at: Date.now(),
    attempt: job.attempt,
    ...extra,
  });
}
