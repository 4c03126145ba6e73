import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { keyRunningRow } from "./keyRunning";

/**
 * Why a pending job waits beyond its turn, in words for the people who wait for it; null when nothing but its
 * turn holds it. Read where one job is shown (jobs:get, the console's job page), never per job of a list.
 */

/** Its client key runs as many jobs as its maxRunning allows: "client key 'ci' is at its limit of 20 running". */
export async function keyLimitReason(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | null> {
  if (job.status !== "pending" || job.queue !== "ready" || !job.clientKeyId) return null;
  const key = await ctx.db.get(job.clientKeyId);
  if (!key || key.maxRunning === undefined) return null;
  // the row counts each start at once and each end once folded: at the limit, the dispatcher holds the job back
  const running = (await keyRunningRow(ctx, key._id))?.running ?? 0;
  return running >= key.maxRunning ? `client key '${key.name}' is at its limit of ${key.maxRunning} running` : null;
}
