import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { APP_LIMITS } from "../core/appLimits";
import { findVersion } from "../apps/entry";
import { checkIntegerInRange, jsonBytes } from "../core/validate";

/**
 * What a worker downloads to run a job: its payload, the checkpoint it resumes from and, for an app job, the app's
 * module. A worker on a metered connection declares the bytes it may still take (`maxBytes`); the dispatcher offers
 * it, and a claim hands it, only jobs that fit. A checkpoint counts at the largest a checkpoint may be (its row is not
 * read: it may hold 700 KB); an app module counts whether or not the worker has it cached (the farm cannot know).
 */
export function checkMaxBytes(maxBytes: number | undefined): number | undefined {
  return maxBytes === undefined ? undefined : checkIntegerInRange(maxBytes, "maxBytes", 0, Number.MAX_SAFE_INTEGER);
}

/** Base64 characters of the largest checkpoint (512 KiB decoded). */
const CHECKPOINT_CHARS_MAX = Math.ceil(APP_LIMITS.checkpointBytesMax / 3) * 4;

/** Job sizes, each computed once per transaction (an app job's module size is one read). */
export function downloadSizes(ctx: QueryCtx): (job: Doc<"jobs">) => Promise<number> {
  const known = new Map<Id<"jobs">, number>();
  return async (job) => {
    let size = known.get(job._id);
    if (size === undefined) {
      size = (job.payloadBytes ?? jsonBytes(job.payload ?? null)) + (job.checkpointed && !job.validation ? CHECKPOINT_CHARS_MAX : 0);
      if (job.app) size += (await findVersion(ctx, job.orgId, job.app.name, job.app.version))?.bytes ?? 0;
      known.set(job._id, size);
    }
    return size;
  };
}

/** Does a job of `size` bytes fit what the worker may still download (`left` undefined: no limit)? */
export function fitsBytes(left: number | undefined, size: number): boolean {
  return left === undefined || size <= left;
}
