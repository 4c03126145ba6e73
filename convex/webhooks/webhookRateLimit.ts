import type { Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { fail } from "../core/errors";

/**
 * A token bucket per client key for jobs:setWebhook (a small table, no component: `@convex-dev/rate-limiter`
 * would need component codegen and a new dependency). Setting a URL takes a token; removing one is free.
 */
export const WEBHOOK_RATE = {
  /** Calls in a burst. */
  burst: 10,
  /** Then one more every this many ms. */
  refillMs: 6_000,
} as const;

/** Take a token for this client key, or fail `rate_limited` saying when to try again. */
export async function takeWebhookToken(ctx: MutationCtx, clientKeyId: Id<"clientKeys">): Promise<void> {
  const now = Date.now();
  const row = await ctx.db
    .query("webhookRateLimits")
    .withIndex("by_client", (q) => q.eq("clientKeyId", clientKeyId))
    .unique();
  const tokens = row ? Math.min(WEBHOOK_RATE.burst, row.tokens + (now - row.updatedAt) / WEBHOOK_RATE.refillMs) : WEBHOOK_RATE.burst;
  if (tokens < 1) {
    const waitS = Math.ceil(((1 - tokens) * WEBHOOK_RATE.refillMs) / 1000);
    fail("rate_limited", `jobs:setWebhook was called too often for this client key; try again in ${waitS} s`);
  }
  if (row) await ctx.db.patch(row._id, { tokens: tokens - 1, updatedAt: now });
  else await ctx.db.insert("webhookRateLimits", { clientKeyId, tokens: tokens - 1, updatedAt: now });
}
