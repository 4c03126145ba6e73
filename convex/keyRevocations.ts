import { v } from "convex/values";
import { internal } from "./_generated/api";
import { internalMutation } from "./_generated/server";
import { revokeMintedPage } from "./queue/revoke";

/**
 * The next page of a revoked key's makings (access/keyCreators.ts): the keys, tokens and workers it made are revoked a
 * page at a time, until none that works is left.
 */
export const revokeMinted = internalMutation({
  args: { by: v.union(v.id("operatorKeys"), v.id("workers")) },
  handler: async (ctx, { by }) => {
    const { revoked, more } = await revokeMintedPage(ctx, by);
    if (more) await ctx.scheduler.runAfter(0, internal.keyRevocations.revokeMinted, { by });
    return { revoked, more };
  },
});
