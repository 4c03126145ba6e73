"use node";
import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalAction } from "./_generated/server";
import { maybeFault } from "./core/faults";
import { privateAddressesAllowed } from "./webhooks/webhookAddress";
import { signatureHeader, webhookTimeoutMs } from "./webhooks/webhooks";
import { postWebhook } from "./webhooks/webhookSend";

/**
 * One completion webhook delivery attempt (webhooks/webhooks.ts), in the Node runtime: it resolves the receiver's name
 * itself and refuses a private answer at connect time, connecting to the address it checked (webhooks/webhookSend.ts),
 * unless the deployment allows private addresses (FARMHAND_WEBHOOK_ALLOW_PRIVATE=1). webhooks:beginAttempt says what
 * to send; webhooks:endAttempt records what happened and what comes next.
 */
export const deliver = internalAction({
  args: { deliveryId: v.id("webhookDeliveries"), generation: v.optional(v.number()) },
  handler: async (ctx, { deliveryId, generation }) => {
    const send = await ctx.runMutation(internal.webhooks.beginAttempt, { deliveryId, generation });
    if (!send) return;
    maybeFault("webhook");
    const at = Date.now();
    const headers = {
      "content-type": "application/json",
      "user-agent": "Farmhand-Webhook/1",
      "farmhand-signature": await signatureHeader(send.secret, send.body, Math.floor(Date.now() / 1000)),
    };
    const sent = await postWebhook({ url: send.url, headers, body: send.body, timeoutMs: webhookTimeoutMs() }, { guard: !privateAddressesAllowed() });
    await ctx.runMutation(internal.webhooks.endAttempt, { deliveryId, generation, at, ms: Date.now() - at, ...sent, jobStatus: send.jobStatus });
  },
});
