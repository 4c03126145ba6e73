import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { canonicalJson } from "../core/canonical";
import { fail } from "../core/errors";
import { Sha256 } from "../core/sha256";

/**
 * An externalId is an idempotency key scoped to the client key that submitted the job: two keys' `order-42` are two
 * jobs. Jobs without a client key (a host app's own mutation through submitJob) share one scope per org. The key is
 * remembered while its job exists (retention deletes it with the job).
 */

/** What makes two submits "the same job": the spec fields that change what runs or when it may run. */
type HashedSpec = { type: string; payload: unknown; priority: number; requirements?: unknown; validation?: unknown; dependsOn?: unknown };

/** SHA-256 (hex) of the canonical JSON of the spec's identity fields, stored on the job (64 bytes). */
export function specHashOf(spec: HashedSpec): string {
  const identity = {
    type: spec.type,
    payload: spec.payload ?? null,
    priority: spec.priority,
    requirements: spec.requirements ?? null,
    validation: spec.validation ?? null,
    dependsOn: spec.dependsOn ?? null,
  };
  return new Sha256().update(new TextEncoder().encode(canonicalJson(identity))).hex();
}

/** The job this scope already holds under this externalId, or null. */
export async function jobByExternalId(
  ctx: QueryCtx,
  orgId: Id<"orgs">,
  clientKeyId: Id<"clientKeys"> | undefined,
  externalId: string,
): Promise<Doc<"jobs"> | null> {
  return await ctx.db
    .query("jobs")
    .withIndex("by_org_client_external", (q) => q.eq("orgId", orgId).eq("clientKeyId", clientKeyId).eq("externalId", externalId))
    .first();
}

/**
 * The existing job a repeated submit answers with, or null when the externalId is new in its scope. A different
 * spec under the same key is refused: answering it with the first job would hide that the caller's work changed.
 * A job stored before spec hashes existed has none to compare: it answers as before.
 */
export async function replayOf(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  clientKeyId: Id<"clientKeys"> | undefined,
  externalId: string,
  specHash: string,
): Promise<Id<"jobs"> | null> {
  const existing = await jobByExternalId(ctx, orgId, clientKeyId, externalId);
  if (!existing) return null;
  if (existing.specHash !== undefined && existing.specHash !== specHash) {
    fail(
      "idempotency_mismatch",
      `externalId ${JSON.stringify(externalId.slice(0, 80))} already names job ${existing._id} with a different spec (type, payload, priority, requirements, validation or dependsOn); use a new externalId for new work`,
    );
  }
  return existing._id;
}
