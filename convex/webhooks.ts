import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import { noteMetrics } from "./lanes/counters";
import { deliveryRefusal, WEBHOOK, webhookBody, webhookOf, webhookRetryDelayMs } from "./webhooks/webhooks";

/**
 * Completion webhook deliveries (webhooks/webhooks.ts): one attempt per run of webhookDelivery:deliver (a Node action), the
 * row says what happens next.
 */

const FINAL = new Set(["succeeded", "dead", "canceled"]);

const delivered = (a: { status?: number }) => a.status !== undefined && a.status >= 200 && a.status < 300;

/** Failed attempts since the last delivered one (the backoff's exponent). */
function failedInARow(attempts: Array<{ status?: number }>): number {
  let n = 0;
  for (let i = attempts.length - 1; i >= 0 && !delivered(attempts[i]); i--) n++;
  return n;
}

/**
 * Mark the delivery in flight and hand the action what to send; null when there is nothing to send. A run of
 * an older generation (the watchdog re-armed the delivery since, convex/watchdog.ts) sends nothing.
 */
export const beginAttempt = internalMutation({
  args: { deliveryId: v.id("webhookDeliveries"), generation: v.optional(v.number()) },
  handler: async (ctx, { deliveryId, generation }) => {
    const row = await ctx.db.get(deliveryId);
    if (!row || row.state !== "pending" || (row.generation ?? 0) !== (generation ?? 0)) return null;
    const job = await ctx.db.get(row.jobId);
    const hook = await webhookOf(ctx, row.clientKeyId);
    const key = await ctx.db.get(row.clientKeyId);
    if (!job || !hook || !key || key.revoked) {
      // purged job, removed webhook or revoked key: nobody to tell any more
      await ctx.db.patch(deliveryId, { state: "failed", nextAt: undefined });
      return null;
    }
    if (!FINAL.has(job.status)) {
      await ctx.db.patch(deliveryId, { state: "waiting", nextAt: undefined });
      return null;
    }
    // Checked again here, not only when it was set: a deployment that stopped allowing private addresses.
    const refusal = deliveryRefusal(hook.url);
    if (refusal) {
      const attempt = { at: Date.now(), ms: 0, error: `not sent: ${refusal}`, jobStatus: job.status };
      await ctx.db.patch(deliveryId, { state: "failed", nextAt: undefined, attempts: [...row.attempts, attempt].slice(-WEBHOOK.attemptsKept) });
      return null;
    }
    await ctx.db.patch(deliveryId, { state: "sending", again: undefined, nextAt: undefined, sendingSince: Date.now() });
    return { url: hook.url, secret: hook.secret, body: await webhookBody(ctx, job), jobStatus: job.status };
  },
});

/** Record the attempt; retry with backoff until 24 h after the first, or deliver again if the job ended again. */
export const endAttempt = internalMutation({
  args: {
    deliveryId: v.id("webhookDeliveries"),
    generation: v.optional(v.number()),
    at: v.number(),
    ms: v.number(),
    status: v.optional(v.number()),
    error: v.optional(v.string()),
    jobStatus: v.string(),
  },
  handler: async (ctx, { deliveryId, generation, ...attempt }) => {
    const row = await ctx.db.get(deliveryId);
    if (!row || row.state !== "sending" || (row.generation ?? 0) !== (generation ?? 0)) return;
    const attempts = [...row.attempts, attempt].slice(-WEBHOOK.attemptsKept);
    const ok = delivered(attempt);
    const now = Date.now();
    if (ok && !row.again) {
      await ctx.db.patch(deliveryId, { state: "delivered", attempts, sendingSince: undefined });
      await noteMetrics(ctx, row.orgId, { webhook: "delivered" });
      return;
    }
    let nextAt = now;
    if (!ok) {
      nextAt = now + webhookRetryDelayMs(failedInARow(attempts));
      if (nextAt - row.firstAt > WEBHOOK.giveUpAfterMs && !row.again) {
        await ctx.db.patch(deliveryId, { state: "failed", attempts, again: undefined, sendingSince: undefined });
        await noteMetrics(ctx, row.orgId, { webhook: "abandoned" });
        return;
      }
    }
    await noteMetrics(ctx, row.orgId, { webhook: ok ? "delivered" : "failed" });
    await ctx.db.patch(deliveryId, { state: "pending", attempts, again: undefined, nextAt, sendingSince: undefined, ...(row.again ? { firstAt: now } : {}) });
    await ctx.scheduler.runAt(nextAt, internal.webhookDelivery.deliver, { deliveryId, generation });
  },
});
