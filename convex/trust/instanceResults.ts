import type { Value } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget } from "../core/budget";
import { valueBytes } from "../core/validate";
import { TRUST } from "./validation";

/**
 * The distinct results of a replicated job's round, one row per result hash beside the instances (table
 * `instanceResults`): the first instance with a result keeps its canonical value there, later ones with the same
 * hash only count. Judging a round reads the small instance rows; only a view of the results reads these.
 */

async function resultRow(ctx: QueryCtx, jobId: Id<"jobs">, round: number, resultHash: string) {
  return await ctx.db
    .query("instanceResults")
    .withIndex("by_job_hash", (q) => q.eq("jobId", jobId).eq("round", round).eq("resultHash", resultHash))
    .first();
}

/** Keep this round's result of this hash (its canonical value), unless an instance already did; its size in bytes. */
export async function keepResult(ctx: MutationCtx, job: Pick<Doc<"jobs">, "_id" | "orgId">, round: number, resultHash: string, value: Value): Promise<number> {
  const kept = await resultRow(ctx, job._id, round, resultHash);
  if (kept) return kept.bytes;
  const bytes = valueBytes(value);
  await ctx.db.insert("instanceResults", { orgId: job.orgId, jobId: job._id, round, resultHash, value, bytes });
  return bytes;
}

/** What a view of a round's distinct results may read of them: with the job's output it stays within the read budget. */
export const RESULTS_VIEW_BYTES = 3 * 1024 * 1024;

/**
 * The round's distinct results, at most RESULTS_VIEW_BYTES of them read (`cut`: others were left unread); rows
 * kept before results moved beside the instances are read from the instance rows the caller already has.
 */
export async function roundResults(ctx: QueryCtx, jobId: Id<"jobs">, round: number, legacy: Array<Pick<Doc<"jobInstances">, "resultHash" | "result">>) {
  const { rows, cut } = await takeWithinBudget(
    ctx.db.query("instanceResults").withIndex("by_job_hash", (q) => q.eq("jobId", jobId).eq("round", round)),
    // a round has at most maxInstances results, so at most that many distinct ones
    TRUST.maxInstances,
    new ByteBudget(RESULTS_VIEW_BYTES),
  );
  const values = new Map<string, unknown>(rows.map((r) => [r.resultHash, r.value]));
  for (const r of legacy) if (r.result !== undefined && r.resultHash !== undefined && !values.has(r.resultHash)) values.set(r.resultHash, r.result);
  return { values, cut };
}
