import { getDocumentSize } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { APP_LIMITS } from "../core/appLimits";
import { fail } from "../core/errors";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Bytes a well-formed base64 text decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/** A checkpoint as a worker uploads it: padded standard base64, at most APP_LIMITS.checkpointBytesMax decoded. */
export function checkCheckpointData(data: string): number {
  // the length alone tells a text far too big before the pattern reads it
  const tooBig = (bytes: number) =>
    fail("too_large", `A checkpoint holds at most ${APP_LIMITS.checkpointBytesMax} bytes (512 KiB) decoded; this one is ${bytes}`);
  if (data.length > Math.ceil(APP_LIMITS.checkpointBytesMax / 3) * 4) tooBig(Math.floor((data.length / 4) * 3));
  if (data.length === 0 || !BASE64.test(data)) fail("invalid_argument", "A checkpoint must be non-empty base64 (standard alphabet, padded)");
  const bytes = decodedBytes(data);
  if (bytes > APP_LIMITS.checkpointBytesMax) tooBig(bytes);
  return bytes;
}

async function checkpointRow(ctx: QueryCtx, jobId: Id<"jobs">): Promise<Doc<"checkpoints"> | null> {
  return await ctx.db
    .query("checkpoints")
    .withIndex("by_job", (q) => q.eq("jobId", jobId))
    .unique();
}

/**
 * Keep this checkpoint as the job's latest (one row per job, replaced in place). A replicated job keeps none:
 * its next instance runs on another machine, and resuming there from one machine's saved state would let that
 * machine's (wrong) state become the other's result, so instances would no longer be independent.
 */
export async function saveCheckpoint(ctx: MutationCtx, job: Doc<"jobs">, data: string, bytes: number): Promise<void> {
  if (job.validation) return;
  const row = await checkpointRow(ctx, job._id);
  const fields = { data, bytes, attempt: job.attempt, savedAt: Date.now() };
  if (row) await ctx.db.patch(row._id, fields);
  else await ctx.db.insert("checkpoints", { orgId: job.orgId, jobId: job._id, ...fields });
  if (!job.checkpointed) await ctx.db.patch(job._id, { checkpointed: true });
}

/** The checkpoint a run of this job resumes from, if an earlier run saved one. */
export async function checkpointOf(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | undefined> {
  if (!job.checkpointed || job.validation) return undefined;
  return (await checkpointRow(ctx, job._id))?.data;
}

/** Retention: the job's checkpoint goes with it. Returns the bytes deleted. */
export async function deleteCheckpoint(ctx: MutationCtx, jobId: Id<"jobs">): Promise<number> {
  const row = await checkpointRow(ctx, jobId);
  if (!row) return 0;
  await ctx.db.delete(row._id);
  return getDocumentSize(row);
}
