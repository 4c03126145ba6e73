import type { Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { displayPrefix, newSecret, sha256Hex } from "./keys";
import { LIMITS } from "../core/limits";
import { checkCapabilityGrants, checkIntegerInRange, checkText } from "../core/validate";

/**
 * Who may do what: enrollment tokens, client and operator keys, for admin:* and the console alike (revoking, which
 * reaches every domain, is queue/revoke.ts). Every key
 * records who made it (`createdBy`: the operator key or managing worker of the console call; none from admin:*).
 */

export type EnrollmentSpec = { capabilities: string[]; maxConcurrentJobs?: number; ttlMs?: number; canManage?: boolean; donor?: string; maxCores?: number };

/** The key whose call made a key: an operator key or a managing worker (access/keyCreators.ts). */
export type Minter = Id<"operatorKeys"> | Id<"workers">;

const stamp = (createdBy: Minter | undefined) => (createdBy ? { createdBy } : {});

/**
 * A one-time enrollment token; the token itself is returned once and only its hash is kept. `donor`: who the
 * machine belongs to (its worker inherits it; replicated jobs with `distinct: "donor"` never give two instances to
 * one donor); blank is none. `maxCores`: the most cores its worker's credit counts (default 256).
 */
export async function createEnrollmentToken(ctx: MutationCtx, orgId: Id<"orgs">, spec: EnrollmentSpec, createdBy?: Minter) {
  const capabilities = checkCapabilityGrants(spec.capabilities);
  const maxConcurrentJobs = checkIntegerInRange(spec.maxConcurrentJobs ?? 1, "maxConcurrentJobs", 1, LIMITS.maxConcurrentJobs);
  const ttlMs = checkIntegerInRange(spec.ttlMs ?? LIMITS.defaultEnrollmentTtlMs, "ttlMs", 1, 365 * 24 * 3600 * 1000);
  const donor = spec.donor === undefined || spec.donor.trim() === "" ? undefined : checkText(spec.donor.trim(), "donor", LIMITS.nameChars);
  const maxCores = spec.maxCores === undefined ? undefined : checkIntegerInRange(spec.maxCores, "maxCores", 1, LIMITS.maxCoresGranted);
  const token = newSecret("fh_e_");
  const enrollmentId = await ctx.db.insert("enrollments", {
    orgId,
    tokenHash: await sha256Hex(token),
    tokenPrefix: displayPrefix(token),
    capabilities,
    maxConcurrentJobs,
    canManage: spec.canManage ?? false,
    expiresAt: Date.now() + ttlMs,
    ...(donor !== undefined ? { donor } : {}),
    ...(maxCores !== undefined ? { maxCores } : {}),
    ...stamp(createdBy),
  });
  return { token, enrollmentId };
}

/** A key's stored fields: only its hash and a display prefix are kept, the key itself is returned once. */
async function newKeyFields(prefix: "fh_c_" | "fh_o_", orgId: Id<"orgs">, name: string) {
  const key = newSecret(prefix);
  const fields = { orgId, name: checkText(name, "name", LIMITS.nameChars), keyHash: await sha256Hex(key), keyPrefix: displayPrefix(key), revoked: false };
  return { key, fields };
}

/** A client key; returned once, only its hash is kept. `canPublish`: it may publish and delete farm apps. */
export async function createClientKeyFor(ctx: MutationCtx, orgId: Id<"orgs">, name: string, canPublish?: boolean, createdBy?: Minter) {
  const { key, fields } = await newKeyFields("fh_c_", orgId, name);
  const clientKeyId = await ctx.db.insert("clientKeys", { ...fields, canPublish: canPublish ?? false, ...stamp(createdBy) });
  return { key, clientKeyId };
}

/** An operator key (fh_o_…); returned once, only its hash is kept. */
export async function createOperatorKeyFor(ctx: MutationCtx, orgId: Id<"orgs">, name: string, createdBy?: Minter) {
  const { key, fields } = await newKeyFields("fh_o_", orgId, name);
  const operatorKeyId = await ctx.db.insert("operatorKeys", { ...fields, ...stamp(createdBy) });
  return { key, operatorKeyId };
}
