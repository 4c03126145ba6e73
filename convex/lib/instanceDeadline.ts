import type { Doc } from "../_generated/dataModel";
import { TRUST } from "./validation";

/**
 * An instance's deadline (BOINC's delay bound): past it, a replacement starts beside it while it runs on, and the
 * first `quorum` agreeing results win. `validation.instanceDeadlineMs` when the submitter gave one; for an app's
 * job, 3 × the app's timeoutMs; never more than TRUST.maxInstanceDeadlineMs.
 */
export const DEADLINE_FACTOR = 3;

/** The deadline known when the instance starts (reading nothing), or undefined: it comes from the lane's run times. */
export function fixedDeadlineMs(job: Pick<Doc<"jobs">, "validation" | "app">): number | undefined {
  const given = job.validation?.instanceDeadlineMs;
  if (given !== undefined) return given;
  if (job.app) return Math.min(DEADLINE_FACTOR * job.app.timeoutMs, TRUST.maxInstanceDeadlineMs);
  return undefined;
}
