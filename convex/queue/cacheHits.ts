import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { entryResult } from "./resultCache";
import { finishJob } from "./transitions";

/** A waiting job answered from a cache entry: succeeded with its result, `cachedFrom` its source job; no donor runs it. */
export async function finishFromCache(ctx: MutationCtx, jobId: Id<"jobs">, entry: Doc<"cacheEntries">, result?: unknown): Promise<void> {
  await ctx.db.patch(jobId, { cachedFrom: entry.sourceJobId, cacheWaitsOn: undefined });
  const job = (await ctx.db.get(jobId))!;
  await finishJob(ctx, job, "succeeded", {
    result: result === undefined ? await entryResult(ctx, entry._id) : result,
    cacheHit: true,
    detail: `cache hit: the result of job ${entry.sourceJobId}`,
  });
}
