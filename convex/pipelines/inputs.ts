import type { Value } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { resultOf } from "../core/bodies";
import { ByteBudget } from "../core/budget";
import { batchTotals } from "./dependencies";
import { fail } from "../core/errors";
import { INPUTS_GONE } from "./parentRefs";

/**
 * A released child's inputs (workers:inputs): the results of its parents, the listed jobs first (in the order
 * given), then the batch's jobs (oldest first), a page at a time under a byte budget. The cursor says where the
 * next page starts: `j:<index>` in the listed jobs, `b:<creation time>` after a batch job. A parent purged anyway
 * (pipelines/parentRefs.ts keeps them; rows from before it did not) is refused with code `gone` (inputs_gone), never
 * skipped: a job runs with every input it was submitted with or not at all.
 */
export const INPUTS_PAGE_ROWS = 500;

export type InputRow = { jobId: Id<"jobs">; externalId?: string; result: unknown };

function parseCursor(cursor: string | null): { phase: "j"; index: number } | { phase: "b"; after: number } {
  if (cursor === null) return { phase: "j", index: 0 };
  const match = /^(j|b):(\d+(?:\.\d+)?)$/.exec(cursor);
  if (!match) fail("invalid_argument", "cursor: not a cursor of workers:inputs (pass back the cursor a page answered, or null)");
  return match[1] === "j" ? { phase: "j", index: Number(match[2]) } : { phase: "b", after: Number(match[2]) };
}

export async function inputsPage(ctx: QueryCtx, child: Doc<"jobs">, cursor: string | null) {
  const page: InputRow[] = [];
  const budget = new ByteBudget();
  const parents = child.dependsOn?.jobs ?? [];
  let at = parseCursor(cursor);
  const full = () => page.length >= INPUTS_PAGE_ROWS || budget.exhausted;
  const push = async (job: Doc<"jobs">) => {
    const result = ((await resultOf(ctx, job)) ?? null) as Value;
    // as stored, not as JSON: 256 KiB of small numbers is a 1 MiB document
    budget.charge({ result });
    page.push({ jobId: job._id, ...(job.externalId !== undefined ? { externalId: job.externalId } : {}), result });
  };
  if (at.phase === "j") {
    let index = at.index;
    while (index < parents.length) {
      if (full()) return { page, cursor: `j:${index}`, done: false };
      const job = await ctx.db.get(parents[index]);
      if (!job) fail("gone", `${INPUTS_GONE}: its parent job ${parents[index]} was purged`);
      budget.charge(job);
      await push(job);
      index++;
    }
    at = { phase: "b", after: -1 };
  }
  const batchId = child.dependsOn?.batch;
  if (batchId === undefined) return { page, cursor: null, done: true };
  const after = at.after;
  if (after === -1 && ((await batchTotals(ctx, child.orgId, batchId))?.purged ?? 0) > 0) {
    fail("gone", `${INPUTS_GONE}: succeeded jobs of its batch ${JSON.stringify(batchId)} were purged`);
  }
  const rows = ctx.db
    .query("jobs")
    .withIndex("by_org_batch", (q) => q.eq("orgId", child.orgId).eq("batchId", batchId).gt("_creationTime", after));
  let last = after;
  for await (const job of rows) {
    if (full()) return { page, cursor: `b:${last}`, done: false };
    budget.charge(job);
    // only the batch's succeeded jobs (jobs added after the child was released have no result for it)
    if (job.status === "succeeded") await push(job);
    last = job._creationTime;
  }
  return { page, cursor: null, done: true };
}
