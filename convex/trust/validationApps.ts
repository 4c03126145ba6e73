import type { Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { type AppPin, findVersion } from "../apps/entry";
import { checkValidation, type JobValidation } from "./validation";

/** The validation an app job gets without one of its own: its pinned version's default (none: quorum 1). */
export async function appValidation(ctx: QueryCtx, orgId: Id<"orgs">, app: AppPin): Promise<{ validation?: JobValidation }> {
  const version = await findVersion(ctx, orgId, app.name, app.version);
  const validation = checkValidation(version?.validation);
  return validation ? { validation } : {};
}

/** The cache ttl an app job gets without `cache` of its own: its pinned version's default (none: not cached). */
export async function appCacheTtl(ctx: QueryCtx, orgId: Id<"orgs">, app: AppPin): Promise<{ cacheTtlMs?: number }> {
  const version = await findVersion(ctx, orgId, app.name, app.version);
  return version?.cacheTtlMs !== undefined ? { cacheTtlMs: version.cacheTtlMs } : {};
}
