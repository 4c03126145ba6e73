import { getDocumentSize } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { LIMITS } from "./limits";
import { valueBytes } from "./validate";

/**
 * A job's bodies live beside it (table `jobBodies`, one row per part), as checkpoints do: the job row that
 * every heartbeat, offer, lease and counter transition rewrites holds only what scheduling needs. Rows
 * written before bodies moved still carry them on the job until the migration moves them (convex/migrations.ts),
 * so every reader here falls back to the job's own field when a job has no body row.
 */
export type BodyPart = Doc<"jobBodies">["part"];

type JobRef = Pick<Doc<"jobs">, "_id" | "orgId">;

async function bodyRow(ctx: QueryCtx, jobId: Id<"jobs">, part: BodyPart): Promise<Doc<"jobBodies"> | null> {
  return await ctx.db
    .query("jobBodies")
    .withIndex("by_job_part", (q) => q.eq("jobId", jobId).eq("part", part))
    .unique();
}

/** Keep `value` as the job's `part` (one row per part, replaced in place); returns its size in bytes. */
export async function setBody(ctx: MutationCtx, job: JobRef, part: BodyPart, value: unknown, bytes = valueBytes(value ?? null)): Promise<number> {
  const row = await bodyRow(ctx, job._id, part);
  if (row) await ctx.db.replace(row._id, { orgId: job.orgId, jobId: job._id, part, value, bytes });
  else await ctx.db.insert("jobBodies", { orgId: job.orgId, jobId: job._id, part, value, bytes });
  return bytes;
}

async function clearBody(ctx: MutationCtx, jobId: Id<"jobs">, part: BodyPart): Promise<void> {
  const row = await bodyRow(ctx, jobId, part);
  if (row) await ctx.db.delete(row._id);
}

// A body's size on the job row says it is beside the job; a row without one is of the old shape.

/** The payload a worker runs (null when none was given). */
export async function payloadOf(ctx: QueryCtx, job: Doc<"jobs">): Promise<unknown> {
  if (job.payloadBytes === undefined) return job.payload ?? null;
  return (await bodyRow(ctx, job._id, "payload"))?.value ?? null;
}

/** The job's result, once a worker completed it (undefined before). */
export async function resultOf(ctx: QueryCtx, job: Doc<"jobs">): Promise<unknown> {
  if (job.resultBytes === undefined) return job.result;
  return (await bodyRow(ctx, job._id, "result"))?.value ?? null;
}

/** The last error's whole text: the job row keeps it cut to LIMITS.summaryErrorChars, the rest is beside it. */
export async function errorOf(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | undefined> {
  if (job.error === undefined || job.error.length < LIMITS.summaryErrorChars) return job.error;
  const row = await bodyRow(ctx, job._id, "error");
  return row ? (row.value as string) : job.error;
}

/**
 * The job-row fields that record a new last error (patch them in with the rest of the transition): the
 * row keeps the first LIMITS.summaryErrorChars characters; a longer text is kept whole beside it.
 */
export async function errorFields(ctx: MutationCtx, job: JobRef, error: string): Promise<{ error: string }> {
  if (error.length > LIMITS.summaryErrorChars) await setBody(ctx, job, "error", error, error.length);
  else await clearBody(ctx, job._id, "error");
  return { error: error.slice(0, LIMITS.summaryErrorChars) };
}

/** Retention and purge: the job's bodies go with it (at most one row per part). Returns the bytes deleted. */
export async function deleteBodies(ctx: MutationCtx, jobId: Id<"jobs">): Promise<number> {
  const rows = await ctx.db
    .query("jobBodies")
    .withIndex("by_job_part", (q) => q.eq("jobId", jobId))
    .take(3);
  for (const row of rows) await ctx.db.delete(row._id);
  return rows.reduce((sum, row) => sum + getDocumentSize(row), 0);
}

/**
 * Move an old-shape job's bodies (payload, result, a long error on the row) beside it; false when there
 * was nothing to move. The migration's one step per job.
 */
export async function moveBodies(ctx: MutationCtx, job: Doc<"jobs">): Promise<boolean> {
  const patch: Partial<Doc<"jobs">> = {};
  if (job.payload !== undefined) {
    patch.payloadBytes = await setBody(ctx, job, "payload", job.payload);
    patch.payload = undefined;
  }
  if (job.result !== undefined) {
    patch.resultBytes = await setBody(ctx, job, "result", job.result);
    patch.result = undefined;
  }
  if (job.error !== undefined && job.error.length > LIMITS.summaryErrorChars) Object.assign(patch, await errorFields(ctx, job, job.error));
  if (Object.keys(patch).length === 0) return false;
  await ctx.db.patch(job._id, patch);
  return true;
}
