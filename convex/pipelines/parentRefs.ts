import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { LIMITS } from "../core/limits";

/**
 * Which jobs a child reads as its inputs (workers:inputs): the jobs and the batch it was submitted with in
 * `dependsOn`, one row each, from its submit until it ends, whether or not the parent was met yet. Retention and
 * purge keep a succeeded job while a row names it (or its batch), so a child never runs with fewer inputs than it
 * was promised; a parent that is gone anyway (purged before this was kept) fails the child with inputs_gone.
 */

/** The code of a job whose parents' results are no longer all there (purged), so it cannot run as submitted. */
export const INPUTS_GONE = "inputs_gone";

export async function insertParentRefs(ctx: MutationCtx, orgId: Id<"orgs">, childId: Id<"jobs">, dependsOn: { jobs?: Id<"jobs">[]; batch?: string }) {
  for (const parentId of dependsOn.jobs ?? []) await ctx.db.insert("parentRefs", { orgId, childId, parentId });
  if (dependsOn.batch !== undefined) await ctx.db.insert("parentRefs", { orgId, childId, batchId: dependsOn.batch });
}

/** The child ended: its parents are free to go (at most LIMITS.dependsOnJobs + 1 rows). */
export async function deleteParentRefs(ctx: MutationCtx, child: Doc<"jobs">) {
  if (child.dependsOn === undefined) return;
  const rows = await ctx.db
    .query("parentRefs")
    .withIndex("by_child", (q) => q.eq("childId", child._id))
    .take(LIMITS.dependsOnJobs + 1);
  for (const row of rows) await ctx.db.delete(row._id);
}

/** A child not yet ended that reads this succeeded job's result (it names the job or its batch), or null. */
export async function childReading(ctx: QueryCtx, job: Doc<"jobs">): Promise<Id<"jobs"> | null> {
  if (job.status !== "succeeded") return null;
  const byJob = await ctx.db
    .query("parentRefs")
    .withIndex("by_parent", (q) => q.eq("parentId", job._id))
    .first();
  if (byJob) return byJob.childId;
  if (job.batchId === undefined) return null;
  const batchId = job.batchId;
  const byBatch = await ctx.db
    .query("parentRefs")
    .withIndex("by_org_batch", (q) => q.eq("orgId", job.orgId).eq("batchId", batchId))
    .first();
  return byBatch?.childId ?? null;
}
