import type { Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import type { appPin } from "../schema";
import { APP_LIMITS, APP_TYPE_PREFIX, APPS_CAPABILITY } from "../core/appLimits";
import { findVersion, latestLiveVersion } from "./apps";
import { fail } from "../core/errors";
import type { JobRequirements } from "../lanes/entry";

export type AppPin = Infer<typeof appPin>;

/** `app.<name>` → name; null for a job type that is not an app's. */
export function appNameOf(type: string): string | null {
  return type.startsWith(APP_TYPE_PREFIX) ? type.slice(APP_TYPE_PREFIX.length) : null;
}

/**
 * The version a job of this type runs: for `app.<name>`, the app's latest version whose module exists now
 * (unknown app → not_found, a malformed name → invalid_argument); undefined for any other job type.
 */
export async function pinApp(ctx: QueryCtx, orgId: Id<"orgs">, type: string): Promise<AppPin | undefined> {
  const name = appNameOf(type);
  if (name === null) return undefined;
  if (!APP_LIMITS.namePattern.test(name)) {
    fail("invalid_argument", `type "${type.slice(0, 80)}": an app name must match [a-z0-9][a-z0-9-]{0,63}`);
  }
  const version = await latestLiveVersion(ctx, orgId, name);
  if (!version) fail("not_found", `No app named "${name}" is published in this org (publish it with POST /api/apps/${name})`);
  return { name, version: version.version, sha256: version.sha256, memoryMB: version.memoryMB, timeoutMs: version.timeoutMs };
}

/** An app job's capabilities: what the submitter asked for plus `apps` (sorted, as routing keys are). */
export function withAppsCapability(capabilities: string[]): string[] {
  return [...new Set([...capabilities, APPS_CAPABILITY])].sort();
}

/**
 * An app job's requirements: the pinned version's memoryMB is its memory requirement (the submitter's own
 * minMemoryMB when larger; the other fields as given), so only machines that have that much memory claim it.
 */
export function withAppMemory(requirements: JobRequirements | undefined, memoryMB: number): JobRequirements {
  return { ...requirements, minMemoryMB: Math.max(memoryMB, requirements?.minMemoryMB ?? 0) };
}

/**
 * At claim: a job pinned to a version whose module was deleted (or that no longer exists) cannot run anywhere; the
 * reason it goes to the dead letters instead of to the worker (the claim applies it), or null when it can run.
 */
export async function moduleGoneError(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | null> {
  if (!job.app) return null;
  const version = await findVersion(ctx, job.orgId, job.app.name, job.app.version);
  if (version && !version.deleted && version.storageId) return null;
  return `app "${job.app.name}" v${job.app.version} was deleted before this job ran; submit it again to run the latest version`;
}
