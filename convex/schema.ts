import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export const jobStatus = v.union(
  v.literal("pending"),
  v.literal("running"),
  v.literal("succeeded"),
  v.literal("canceled"),
  v.literal("dead"),
);

// Only pending jobs carry a queue: "ready" ones are claimable now, "delayed" ones wait for availableAt
// (a scheduled promotion flips them to ready), so delayed heads never hide ready jobs from a claim.
export const queueState = v.union(v.literal("ready"), v.literal("delayed"));

export default defineSchema({
  orgs: defineTable({ name: v.string() }),

  enrollments: defineTable({
    orgId: v.id("orgs"),
    tokenHash: v.string(),
    tokenPrefix: v.string(),
    capabilities: v.array(v.string()),
    maxConcurrentJobs: v.number(),
    canManage: v.boolean(),
    expiresAt: v.number(),
    usedAt: v.optional(v.number()),
    workerId: v.optional(v.id("workers")),
  }).index("by_hash", ["tokenHash"]),

  workers: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    machineId: v.string(),
    allowedCapabilities: v.array(v.string()),
    advertisedCapabilities: v.array(v.string()),
    maxConcurrentJobs: v.number(),
    canManage: v.boolean(),
    keyHash: v.string(),
    keyPrefix: v.string(),
    revoked: v.boolean(),
    lastSeenAt: v.number(),
  })
    .index("by_hash", ["keyHash"])
    .index("by_org", ["orgId"]),

  clientKeys: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    keyHash: v.string(),
    keyPrefix: v.string(),
    revoked: v.boolean(),
    /** May publish and delete farm apps (optional: keys created before apps existed have none). */
    canPublish: v.optional(v.boolean()),
  }).index("by_hash", ["keyHash"]),

  // Farm apps: one row per published version of an app (a WASI module in file storage). A deleted version's
  // row stays, without its module, so a job pinned to it can be failed with the reason.
  appVersions: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    version: v.number(),
    sha256: v.string(),
    bytes: v.number(),
    memoryMB: v.number(),
    timeoutMs: v.number(),
    storageId: v.optional(v.id("_storage")),
    publishedBy: v.id("clientKeys"),
    createdAt: v.number(),
    deleted: v.boolean(),
    deletedAt: v.optional(v.number()),
  })
    .index("by_org_name_version", ["orgId", "name", "version"])
    .index("by_org_deleted_name", ["orgId", "deleted", "name", "version"]),

  lanes: defineTable({
    orgId: v.id("orgs"),
    routingKey: v.string(),
    capabilities: v.array(v.string()),
  }).index("by_org_key", ["orgId", "routingKey"]),

  // Sharded counters: a write picks one shard at random, a read sums all shards.
  laneShards: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    shard: v.number(),
    pending: v.number(),
    running: v.number(),
  })
    .index("by_lane_shard", ["laneId", "shard"])
    .index("by_org", ["orgId"]),

  orgShards: defineTable({
    orgId: v.id("orgs"),
    shard: v.number(),
    succeeded: v.number(),
    canceled: v.number(),
    dead: v.number(),
  }).index("by_org_shard", ["orgId", "shard"]),

  throughput: defineTable({
    orgId: v.id("orgs"),
    minute: v.number(),
    shard: v.number(),
    finished: v.number(),
  })
    .index("by_org_minute_shard", ["orgId", "minute", "shard"])
    .index("by_minute", ["minute"]),

  jobs: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    type: v.string(),
    payload: v.any(),
    priority: v.number(),
    negPriority: v.number(),
    requiredCapabilities: v.array(v.string()),
    status: jobStatus,
    queue: v.optional(queueState),
    attempt: v.number(),
    maxAttempts: v.number(),
    leaseMs: v.number(),
    leaseId: v.optional(v.string()),
    leaseExpiresAt: v.optional(v.number()),
    workerId: v.optional(v.id("workers")),
    availableAt: v.number(),
    externalId: v.optional(v.string()),
    batchId: v.optional(v.string()),
    progress: v.optional(v.number()),
    statusText: v.optional(v.string()),
    result: v.optional(v.any()),
    error: v.optional(v.string()),
    cancelRequested: v.optional(v.boolean()),
    startedAt: v.optional(v.number()),
    finishedAt: v.optional(v.number()),
  })
    .index("by_lane_ready", ["laneId", "queue", "negPriority", "availableAt"])
    .index("by_lane_delayed", ["laneId", "queue", "availableAt"])
    .index("by_lease", ["leaseId"])
    .index("by_worker_status", ["workerId", "status"])
    .index("by_org_external", ["orgId", "externalId"])
    .index("by_org_batch", ["orgId", "batchId"])
    .index("by_org_status", ["orgId", "status", "finishedAt"])
    .index("by_finished", ["finishedAt"]),

  jobOutput: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    seq: v.number(),
    chunk: v.string(),
  }).index("by_job_seq", ["jobId", "seq"]),

  jobEvents: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    kind: v.string(),
    at: v.number(),
    workerId: v.optional(v.id("workers")),
    attempt: v.optional(v.number()),
    detail: v.optional(v.string()),
  }).index("by_job", ["jobId"]),
});
