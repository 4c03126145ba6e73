import { convexToJson, type Value } from "convex/values";
import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { jitteredBackoffMs } from "../core/backoff";
import { errorOf, resultOf } from "../core/bodies";
import { fail } from "../core/errors";
import { privateAddressesAllowed, webhookAddressRefusal } from "./webhookAddress";

/**
 * Completion webhooks. A job remembers the client key that submitted it; when it ends (succeeded, dead or
 * canceled) and that key has a webhook, the job's one delivery row is set pending and a delivery run is
 * scheduled (convex/webhooks.ts). A run sends one attempt; a non-2xx answer or a timeout is retried with
 * exponential backoff and jitter until 24 hours after the first attempt. One row per job means at most one
 * delivery in flight per job: a job that ends again meanwhile is delivered once more after it.
 */

export const WEBHOOK = {
  urlChars: 2_048,
  /** A receiver must answer within this time (FARMHAND_WEBHOOK_TIMEOUT_MS overrides it, for tests). */
  timeoutMs: 10_000,
  /** First retry within this time; each later one waits up to twice as long… */
  retryBaseMs: 30_000,
  /** …but never more than this. */
  retryMaxMs: 60 * 60_000,
  /** Retried until this long after the first attempt. */
  giveUpAfterMs: 24 * 60 * 60_000,
  /** Attempts kept on the delivery row (the newest). */
  attemptsKept: 100,
} as const;

/** A tunable from the environment (tests and self-hosted farms), else the default. */
function fromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function webhookTimeoutMs(): number {
  return fromEnv("FARMHAND_WEBHOOK_TIMEOUT_MS", WEBHOOK.timeoutMs);
}

export function webhookRetryDelayMs(failedAttempts: number): number {
  const base = fromEnv("FARMHAND_WEBHOOK_RETRY_BASE_MS", WEBHOOK.retryBaseMs);
  return jitteredBackoffMs(failedAttempts - 1, base, Math.max(base, WEBHOOK.retryMaxMs));
}

/**
 * http or https, absolute, no credentials in it, and (unless the deployment sets FARMHAND_WEBHOOK_ALLOW_PRIVATE=1:
 * self-hosting, tests) no loopback, private, link-local or metadata address (webhooks/webhookAddress.ts).
 */
export function checkWebhookUrl(url: string): string {
  if (url.length > WEBHOOK.urlChars) fail("too_large", `url is longer than ${WEBHOOK.urlChars} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    fail("invalid_argument", "url must be an absolute http or https URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") fail("invalid_argument", "url must use http or https");
  if (parsed.username || parsed.password) fail("invalid_argument", "url must not carry credentials");
  const refusal = deliveryRefusal(parsed.toString());
  if (refusal) fail("address_refused", `${refusal}; webhooks go to public addresses only (a self-hosted farm may set FARMHAND_WEBHOOK_ALLOW_PRIVATE=1)`);
  return parsed.toString();
}

/** Why a stored webhook URL may not be called now (checked again at each delivery), or null. */
export function deliveryRefusal(url: string): string | null {
  if (privateAddressesAllowed()) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not an absolute URL";
  }
  return webhookAddressRefusal(parsed);
}

export async function webhookOf(ctx: QueryCtx, clientKeyId: Id<"clientKeys">): Promise<Doc<"webhooks"> | null> {
  return await ctx.db
    .query("webhooks")
    .withIndex("by_client", (q) => q.eq("clientKeyId", clientKeyId))
    .unique();
}

export async function deliveryOf(ctx: QueryCtx, jobId: Id<"jobs">): Promise<Doc<"webhookDeliveries"> | null> {
  return await ctx.db
    .query("webhookDeliveries")
    .withIndex("by_job", (q) => q.eq("jobId", jobId))
    .unique();
}

/** A job's webhook delivery as the console's job page shows it, or null when it has none. */
export async function deliveriesOf(ctx: QueryCtx, jobId: Id<"jobs">) {
  const row = await deliveryOf(ctx, jobId);
  return row ? { state: row.state, nextAt: row.nextAt, attempts: row.attempts } : null;
}

/** The job just ended (finishJob): if its submitting key has a webhook, make sure a delivery follows. */
export async function noteJobEnded(ctx: MutationCtx, job: Pick<Doc<"jobs">, "_id" | "orgId" | "clientKeyId">): Promise<void> {
  if (!job.clientKeyId) return;
  const hook = await webhookOf(ctx, job.clientKeyId);
  if (!hook) return;
  const now = Date.now();
  const row = await deliveryOf(ctx, job._id);
  if (!row) {
    const deliveryId = await ctx.db.insert("webhookDeliveries", {
      orgId: job.orgId,
      jobId: job._id,
      clientKeyId: job.clientKeyId,
      state: "pending",
      firstAt: now,
      nextAt: now,
      attempts: [],
    });
    await ctx.scheduler.runAfter(0, internal.webhookDelivery.deliver, { deliveryId });
    return;
  }
  if (row.state === "sending") {
    if (!row.again) await ctx.db.patch(row._id, { again: true });
    return;
  }
  if (row.state === "pending") return; // its run reads the job as it is then
  await ctx.db.patch(row._id, { state: "pending", again: undefined, firstAt: now, nextAt: now });
  await ctx.scheduler.runAfter(0, internal.webhookDelivery.deliver, { deliveryId: row._id, generation: row.generation ?? 0 });
}

/** The body a receiver gets for an ended job (`result` as Convex's JSON form of the value). */
export async function webhookBody(ctx: QueryCtx, job: Doc<"jobs">): Promise<string> {
  const result = await resultOf(ctx, job);
  const error = await errorOf(ctx, job);
  return JSON.stringify({
    jobId: job._id,
    type: job.type,
    status: job.status,
    ...(result !== undefined ? { result: convexToJson(result as Value) } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(job.externalId !== undefined ? { externalId: job.externalId } : {}),
    ...(job.batchId !== undefined ? { batchId: job.batchId } : {}),
    finishedAt: job.finishedAt,
  });
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `Farmhand-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret's UTF-8 bytes>`. */
export async function signatureHeader(secret: string, body: string, unixSeconds: number): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${unixSeconds}.${body}`));
  return `t=${unixSeconds},v1=${hex(mac)}`;
}
