import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { p95RunMs } from "../observability/entry";
import { TRUST } from "./validation";

/**
 * An instance's deadline (BOINC's delay bound): past it, a replacement starts beside it while it runs on, and the
 * first `quorum` agreeing results win. `validation.instanceDeadlineMs` when the submitter gave one; for an app's
 * job, 3 × the app's timeoutMs; else 3 × the p95 run time of its lane's runs that returned a result (its type with
 * the same requirements), read once its first lease check runs; never more than TRUST.maxInstanceDeadlineMs, which
 * is also the deadline of a lane with too few runs to tell.
 */
export const DEADLINE_FACTOR = 3;

/** The deadline known when the instance starts (reading nothing), or undefined: it comes from the lane's run times. */
export function fixedDeadlineMs(job: Pick<Doc<"jobs">, "validation" | "app">): number | undefined {
  const given = job.validation?.instanceDeadlineMs;
  if (given !== undefined) return given;
  if (job.app) return Math.min(DEADLINE_FACTOR * job.app.timeoutMs, TRUST.maxInstanceDeadlineMs);
  return undefined;
}

/** The deadline from the lane's run times (its counter row, written only by the summariser). */
export async function laneDeadlineMs(ctx: QueryCtx, job: Pick<Doc<"jobs">, "laneId">): Promise<number> {
  const row = await ctx.db
    .query("laneShards")
    .withIndex("by_lane_shard", (q) => q.eq("laneId", job.laneId).eq("shard", 0))
    .unique();
  const p95 = p95RunMs(row?.runMs);
  return p95 === null ? TRUST.maxInstanceDeadlineMs : Math.min(DEADLINE_FACTOR * p95, TRUST.maxInstanceDeadlineMs);
}
