import { ConvexError } from "convex/values";

export type ErrorCode =
  | "bad_key"
  | "revoked"
  | "stale_lease"
  | "not_found"
  | "invalid_argument"
  | "too_large"
  | "token_expired"
  | "token_used"
  | "forbidden"
  /** A thing that existed and was removed on purpose (a deleted app version). */
  | "gone"
  /** A webhook URL pointing into a private network, at loopback, link-local or metadata addresses (webhooks/webhookAddress.ts). */
  | "address_refused"
  /** Called too often in a short time (jobs:setWebhook); wait and call again. */
  | "rate_limited"
  /** A submit whose job would join a batch that one of its parents waits on (pipelines/dependencyCycles.ts). */
  | "dependency_cycle"
  /** An externalId (Idempotency-Key) reused with a different job spec (queue/idempotency.ts). */
  | "idempotency_mismatch";

export type FarmErrorData = { code: ErrorCode; message: string };

/** Throw the one kind of error every Farmhand function raises: a ConvexError with a stable code. */
export function fail(code: ErrorCode, message: string): never {
  throw new ConvexError<FarmErrorData>({ code, message });
}
