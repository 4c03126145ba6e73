import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

/**
 * The seed's queue design, kept only as the baseline of bench/compare.bench.ts: one global flag document
 * says "there is work", and jobs sit in one status index in arrival order.
 */
export default defineSchema({
  flags: defineTable({ hasWork: v.boolean() }),
  jobs: defineTable({
    type: v.string(),
    requiredCapabilities: v.array(v.string()),
    status: v.union(v.literal("pending"), v.literal("running"), v.literal("done")),
    workerName: v.optional(v.string()),
  }).index("by_status", ["status"]),
});
