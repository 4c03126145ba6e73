import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { machineFacts } from "./lanes/facts";
import { jobRequirements, requirementClass } from "./lanes/requirements";
import { jobValidation, validationSpec } from "./trust/validation";
import { eventFields, jobMove } from "./observability/moves";
import { histogram, jobCounts, finishedCounts, orgEvents } from "./observability/rows";

export const jobStatus = v.union(
  v.literal("pending"),
  v.literal("running"),
  v.literal("succeeded"),
  v.literal("canceled"),
  v.literal("dead"),
  // submitted with dependsOn: not queued until every parent has succeeded (pipelines/dependencies.ts)
  v.literal("waiting"),
);

/**
 * The console's job filter: every field optional; `from`/`to` bound the time the job was submitted
 * (ms since the epoch, `from` inclusive, `to` exclusive). Newest first. Checked by queue/jobQuery.ts.
 */
export const jobFilter = v.object({
  status: v.optional(jobStatus),
  type: v.optional(v.string()),
  batchId: v.optional(v.string()),
  externalId: v.optional(v.string()),
  from: v.optional(v.number()),
  to: v.optional(v.number()),
  // the client key the jobs count against (its id; another org's or a malformed one matches nothing), and their
  // fairness key
  clientKeyId: v.optional(v.string()),
  fairnessKey: v.optional(v.string()),
});

// Only pending jobs carry a queue: "ready" ones are claimable now, "delayed" ones wait for availableAt
// (a scheduled promotion flips them to ready), so delayed heads never hide ready jobs from a claim.
// "offered" ones were handed by the dispatcher to one waiting worker (workerId) until offerExpiresAt;
// they are out of the ready range, and the lane counters count them as running.
export const queueState = v.union(v.literal("ready"), v.literal("delayed"), v.literal("offered"));

/** The app version an `app.<name>` job runs, pinned when it was submitted (handed to the worker with the job). */
export const appPin = v.object({
  name: v.string(),
  version: v.number(),
  sha256: v.string(),
  memoryMB: v.number(),
  timeoutMs: v.number(),
});

/** The apps an `apps` lane was given jobs of (the first few, lanes/laneApps.ts). */
const laneApps = v.array(v.object({ name: v.string(), version: v.number() }));

/** A job's parents (jobs:submit's `dependsOn`): listed jobs and/or every job of a batch. */
export const dependsOn = v.object({
  jobs: v.optional(v.array(v.id("jobs"))),
  batch: v.optional(v.string()),
});

/**
 * What every credit row (a worker's day, week and all time) counts: `cpuMs` every credited millisecond, of which
 * `wallMs` were credited by wall time because the CPU could not be measured; `complete` and `fail` calls.
 */
const creditFigures = {
  cpuMs: v.number(),
  wallMs: v.number(),
  jobs: v.number(),
  failed: v.number(),
  // instances canceled because their job reached its quorum (issue 20): credited, neither done nor failed
  canceledAtQuorum: v.optional(v.number()),
  // the energy its attempts used (joules), as the worker measured or estimated it (trust/energy.ts)
  energyJ: v.optional(v.number()),
};

export const inboxKind = v.union(v.literal("offer"), v.literal("cancel"), v.literal("resync"));

/**
 * Who made a key (access/keyCreators.ts): the operator key, or the managing worker, whose console call made it; none when
 * an operator made it with `npx convex run admin:…`. A worker's is its enrollment token's. Revoking a key revokes the
 * keys it made.
 */
export const createdBy = v.optional(v.union(v.id("operatorKeys"), v.id("workers")));

export default defineSchema({
  orgs: defineTable({
    name: v.string(),
    // results accepted from one worker alone (no quorum of 2) may enter the result cache (off unless set)
    cacheUnvalidated: v.optional(v.boolean()),
  }),

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
    // revoked by an operator before use (its expiresAt is moved to that moment too)
    revokedAt: v.optional(v.number()),
    // who the machine belongs to (replicated jobs with distinct "donor"), and the cores its credit may count
    donor: v.optional(v.string()),
    maxCores: v.optional(v.number()),
    createdBy,
  })
    .index("by_hash", ["tokenHash"])
    .index("by_org", ["orgId"])
    .index("by_expires", ["expiresAt"])
    .index("by_created_by", ["createdBy", "usedAt", "revokedAt"]),

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
    // Written by older versions only: presence now lives in `presence`, so that a presence call does not
    // re-run every subscription that authenticates with this worker's key.
    lastSeenAt: v.optional(v.number()),
    // What its machine has, as the worker last reported it (enroll, workers:reportFacts); none from older workers
    facts: v.optional(machineFacts),
    // when it was revoked (or left): the retention sweep deletes it that long after; none from older versions
    revokedAt: v.optional(v.number()),
    // its daily job quota while an invalid result keeps it below full (trust/validationTrust.ts); none: full
    dailyQuota: v.optional(v.number()),
    // from its enrollment: who it belongs to (none: its own donor) and the cores its credit may count (none: 256)
    donor: v.optional(v.string()),
    maxCores: v.optional(v.number()),
    createdBy,
  })
    .index("by_hash", ["keyHash"])
    .index("by_org", ["orgId"])
    .index("by_org_machine", ["orgId", "machineId"])
    .index("by_revoked_at", ["revoked", "revokedAt"])
    .index("by_created_by", ["createdBy", "revoked"]),

  /** When each worker last called (presence calls, and other calls at most once a minute). */
  presence: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    lastSeenAt: v.number(),
    // The worker said it stopped (workers:ready with `stopping`): offline from then, until its next call.
    stoppedAt: v.optional(v.number()),
  })
    .index("by_worker", ["workerId"])
    .index("by_org", ["orgId"])
    // most recently seen first: the workers lists (online ones first); a revoked worker has no presence row
    .index("by_org_seen", ["orgId", "lastSeenAt"]),

  /** How many jobs each worker runs (lanes/workerSlots.ts): written when one of its jobs starts or stops running. */
  workerSlots: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    running: v.number(),
    // the slots it last declared (workers:ready, complete, fail, release; 0: it takes nothing now); none: never
    declared: v.optional(v.number()),
    // its running jobs are frozen (its heartbeats said so), until one says otherwise or none runs
    suspended: v.optional(v.boolean()),
  })
    .index("by_worker", ["workerId"])
    .index("by_org", ["orgId"]),

  /**
   * How many more jobs each worker wants offered now (`wants`), declared by the worker and counted down by
   * the dispatcher; `since` is set while wants > 0; `capabilities` are its effective capabilities as last
   * declared (a new lane checks them to learn about workers already waiting).
   */
  waiters: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    wants: v.number(),
    since: v.optional(v.number()),
    capabilities: v.array(v.string()),
    // what its offers may still download (bytes), on a metered connection: declared with its slots, counted down by
    // the dispatcher's offers (queue/downloadBytes.ts); none: no limit
    bytesLeft: v.optional(v.number()),
  })
    .index("by_worker", ["workerId"])
    .index("by_org_since", ["orgId", "since"]),

  /** One row per (lane, waiting worker that can serve it): the dispatcher's "oldest waiter of this lane". */
  laneWaiters: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    workerId: v.id("workers"),
    since: v.number(),
  })
    .index("by_lane_since", ["laneId", "since"])
    .index("by_worker", ["workerId"])
    .index("by_org", ["orgId"]),

  /**
   * A worker's doorbell: offers made to it, cancel notices for its running jobs, and a resync notice after
   * an offer to it expired. Only the dispatcher, cancels and the worker's own calls write here; heartbeats
   * never do, so the worker's one subscription (workers:doorbell) stays quiet while jobs run.
   */
  inbox: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    kind: inboxKind,
    jobId: v.optional(v.id("jobs")),
    // offers: the job's order (priority desc, then availableAt), so a claim takes the best offer first
    negPriority: v.optional(v.number()),
    availableAt: v.optional(v.number()),
    expiresAt: v.optional(v.number()),
    expiryCheck: v.optional(v.id("_scheduled_functions")),
  })
    .index("by_worker_kind", ["workerId", "kind", "negPriority", "availableAt"])
    .index("by_job", ["jobId"]),

  /** One per org: whether its dispatcher is scheduled, and what it saw when it last went idle. */
  dispatchStates: defineTable({
    orgId: v.id("orgs"),
    scheduled: v.boolean(),
    generation: v.number(),
    // a ready job may be waiting that no waiting worker could take
    readyJobs: v.boolean(),
    // some worker is waiting
    waiters: v.boolean(),
    // when `scheduled` was set, or a busy run last said it is alive: the watchdog re-arms a stale one
    armedAt: v.optional(v.number()),
  })
    .index("by_org", ["orgId"])
    .index("by_scheduled_armed", ["scheduled", "armedAt"]),

  /** One per org: when the summariser last ran and whether (and when) it is scheduled. */
  summaryStates: defineTable({
    orgId: v.id("orgs"),
    refreshedAt: v.number(),
    scheduledAt: v.optional(v.number()),
    scheduledId: v.optional(v.id("_scheduled_functions")),
    // bumped by the watchdog when it re-arms a refresh that never ran: a refresh of an older one does nothing
    generation: v.optional(v.number()),
  })
    .index("by_org", ["orgId"])
    .index("by_scheduled_at", ["scheduledAt"]),

  /** One per org: what farm:overview shows, written only by the summariser. */
  summaries: defineTable({
    orgId: v.id("orgs"),
    refreshedAt: v.number(),
    counts: v.object({ pending: v.number(), running: v.number(), succeeded: v.number(), canceled: v.number(), dead: v.number() }),
    lanes: v.array(
      v.object({
        routingKey: v.string(),
        capabilities: v.array(v.string()),
        pending: v.number(),
        running: v.number(),
        requirements: v.optional(requirementClass),
        // some online worker can run its jobs (by capabilities); absent: not known (see queue/roster.ts)
        servable: v.optional(v.boolean()),
        // when no online worker can run it: the capabilities of it (its type's first) that no online worker offers
        nobodyHandles: v.optional(v.array(v.string())),
        // the online machines and donors that can run it (capabilities and class) when fewer than 11, else `many`;
        // absent: not known (queue/roster.ts)
        onlineMachines: v.optional(v.object({ machines: v.array(v.string()), donors: v.array(v.string()), many: v.optional(v.literal(true)) })),
        // the slots of those online workers that can run it (free, running) and how many workers; absent with `many`
        // or when not known
        apps: v.optional(laneApps),
        moreApps: v.optional(v.literal(true)),
        capableSlots: v.optional(v.object({ free: v.number(), busy: v.number(), workers: v.number() })),
      }),
    ),
    // every unrevoked worker of the org, and those online, as of refreshedAt (`workers` lists the first ones)
    workerCounts: v.optional(v.object({ total: v.number(), online: v.number() })),
    // lanes with pending jobs whose requirements no worker of the org (by its reported facts) meets
    unmeetable: v.optional(v.array(v.object({ routingKey: v.string(), requirements: requirementClass, pending: v.number() }))),
    // the most memory, cores and one GPU's memory any unrevoked worker reports (what an unmet job is told)
    largestMachine: v.optional(v.object({ memoryMB: v.number(), cores: v.number(), vramMB: v.number() })),
    workers: v.array(
      v.object({
        workerId: v.id("workers"),
        name: v.string(),
        machineId: v.string(),
        keyPrefix: v.string(),
        maxConcurrentJobs: v.number(),
        lastSeenAt: v.number(),
        revoked: v.boolean(),
        // What the worker can run now (declared, as the server allows it); absent in summaries written before.
        capabilities: v.optional(v.array(v.string())),
        facts: v.optional(machineFacts),
        // It said it stopped, at this time (offline from then); absent: it did not, or called since.
        stoppedAt: v.optional(v.number()),
      }),
    ),
    // Each worker's credit per UTC day of the week the summary was written in: clients sum the days of their own
    // current week, so the line turns to 0 on Monday without a re-run.
    creditDays: v.optional(
      v.array(v.object({ workerId: v.id("workers"), day: v.number(), cpuMs: v.number(), jobs: v.number(), energyJ: v.optional(v.number()) })),
    ),
    // false: more workers gave this week than the list holds (7 days × the listed workers); each donor reads its own days
    creditDaysComplete: v.optional(v.boolean()),
    throughput: v.array(v.object({ minuteStart: v.number(), finished: v.number(), failed: v.number() })),
    // queue wait (claim time − ready time) over the last hour, from the minute histograms
    queueWait: v.optional(v.object({ p50Ms: v.number(), p95Ms: v.number(), samples: v.number() })),
    // per client key with jobs pending or running, or started in the last hour: its counts and its starts of the hour
    clientKeys: v.optional(
      v.array(v.object({ clientKeyId: v.id("clientKeys"), pending: v.number(), running: v.number(), startedLastHour: v.number() })),
    ),
    // workers by what they do as of refreshedAt, and their slots (observability/workerStates.ts); none before
    workerStates: v.optional(
      v.object({ idle: v.number(), busy: v.number(), suspended: v.number(), paused: v.number(), offline: v.number() }),
    ),
    slotStates: v.optional(v.object({ free: v.number(), busy: v.number() })),
    deadLetters: v.array(
      v.object({
        jobId: v.id("jobs"),
        type: v.string(),
        attempt: v.number(),
        maxAttempts: v.number(),
        error: v.optional(v.string()),
        requiredCapabilities: v.array(v.string()),
        finishedAt: v.optional(v.number()),
      }),
    ),
  }).index("by_org", ["orgId"]),

  clientKeys: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    keyHash: v.string(),
    keyPrefix: v.string(),
    revoked: v.boolean(),
    /** May publish and delete farm apps (optional: keys created before apps existed have none). */
    canPublish: v.optional(v.boolean()),
    // Fair share (queue/fairShare.ts, set by admin:setClientKeyLimits): its share of each priority level against
    // the org's other keys (none: 1), its running jobs and instances at most (none: no limit), and how many
    // fairnessWeights rows it has (none: 0, so the dispatcher looks none up).
    weight: v.optional(v.number()),
    maxRunning: v.optional(v.number()),
    fairnessOverrides: v.optional(v.number()),
    createdBy,
  })
    .index("by_hash", ["keyHash"])
    .index("by_org", ["orgId"])
    .index("by_created_by", ["createdBy", "revoked"]),

  /** A client key's weight for one of its fairness keys (set with its limits; default 1): at most 1,000 per key. */
  fairnessWeights: defineTable({
    orgId: v.id("orgs"),
    clientKeyId: v.id("clientKeys"),
    fairnessKey: v.string(),
    weight: v.number(),
  }).index("by_client_key", ["clientKeyId", "fairnessKey"]),

  /**
   * Fair share's virtual time (queue/fairShare.ts): a client key's pass per priority level (`scope` "key"), and a
   * fairness key's pass inside its client key (`scope` "flow"; no fairnessKey: the key's jobs without one). Each
   * job handed out advances its key's pass by 1/weight. Written only by the transactions that hand jobs out.
   */
  fairPasses: defineTable({
    orgId: v.id("orgs"),
    negPriority: v.number(),
    scope: v.union(v.literal("key"), v.literal("flow")),
    clientKeyId: v.optional(v.id("clientKeys")),
    fairnessKey: v.optional(v.string()),
    pass: v.number(),
    // when it last moved (the retention sweep deletes fairness keys' rows idle a day: they start at the clock again)
    at: v.number(),
  })
    .index("by_org_scope", ["orgId", "negPriority", "scope", "clientKeyId", "fairnessKey"])
    .index("by_scope_at", ["scope", "at"]),

  /**
   * A lane's virtual time per priority level (`scope` "keys": between client keys; "flows": between one client
   * key's fairness keys): the pass of the last job handed out there. A key that had nothing ready in the lane
   * comes back at it (no banked credit).
   */
  fairClocks: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    negPriority: v.number(),
    scope: v.union(v.literal("keys"), v.literal("flows")),
    clientKeyId: v.optional(v.id("clientKeys")),
    vtime: v.number(),
  }).index("by_lane", ["laneId", "negPriority", "scope", "clientKeyId"]),

  /**
   * Where a round stopped reading a lane's flows at one priority level, when it had more than a round reads
   * (queue/fairQueue.ts): the next round starts after it. None: the level fits in a round.
   */
  fairCursors: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    negPriority: v.number(),
    after: v.object({ clientKeyId: v.optional(v.id("clientKeys")), fairnessKey: v.optional(v.string()) }),
  }).index("by_org", ["orgId"]),

  /**
   * Each client key's running jobs and instances (offered ones included), for its maxRunning (lanes/keyRunning.ts):
   * starts are added here by the transaction that hands the job out; ends arrive as keyRunningDeltas, folded in.
   */
  keyRunning: defineTable({
    orgId: v.id("orgs"),
    clientKeyId: v.id("clientKeys"),
    running: v.number(),
  }).index("by_client", ["clientKeyId"]),

  /** A client key's running job or instance ended (-1 each), inserted where it ends (an insert conflicts with nobody). */
  keyRunningDeltas: defineTable({
    orgId: v.id("orgs"),
    clientKeyId: v.id("clientKeys"),
    delta: v.number(),
  })
    .index("by_org", ["orgId"])
    .index("by_client", ["clientKeyId"]),

  /** Operator keys (fh_o_…): the console and the CLI's operator commands; never a worker's or a job's. */
  operatorKeys: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    keyHash: v.string(),
    keyPrefix: v.string(),
    revoked: v.boolean(),
    createdBy,
  })
    .index("by_hash", ["keyHash"])
    .index("by_org", ["orgId"])
    .index("by_created_by", ["createdBy", "revoked"]),

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
    // a client key with the publish right, or an operator key
    publishedBy: v.optional(v.id("clientKeys")),
    publishedByOperator: v.optional(v.id("operatorKeys")),
    createdAt: v.number(),
    deleted: v.boolean(),
    deletedAt: v.optional(v.number()),
    // the validation its jobs get when submitted without one (POST /api/apps/<name>?quorum=2); none: quorum 1
    validation: v.optional(validationSpec),
    // its jobs submitted without `cache` are cached for this long (POST /api/apps/<name>?cacheTtlMs=); none: not cached
    cacheTtlMs: v.optional(v.number()),
  })
    .index("by_org_name_version", ["orgId", "name", "version"])
    .index("by_org_deleted_name", ["orgId", "deleted", "name", "version"]),

  lanes: defineTable({
    orgId: v.id("orgs"),
    routingKey: v.string(),
    capabilities: v.array(v.string()),
    // the class of machine its jobs need (powers of two), part of the routing key; none: any machine
    requirements: v.optional(requirementClass),
    // an `apps` lane: the first apps (name, version) it was given jobs of, noted when new (its label names them), and
    // whether jobs of more apps came after
    apps: v.optional(laneApps),
    moreApps: v.optional(v.literal(true)),
  }).index("by_org_key", ["orgId", "routingKey"]),

  /**
   * Counter changes, inserted by transitions (an insert conflicts with nobody) and folded into the totals
   * below by the summariser, the totals' only writer (lanes/counters.ts).
   */
  counterDeltas: defineTable({
    orgId: v.id("orgs"),
    laneId: v.optional(v.id("lanes")),
    pending: v.optional(v.number()),
    running: v.optional(v.number()),
    succeeded: v.optional(v.number()),
    canceled: v.optional(v.number()),
    dead: v.optional(v.number()),
    minute: v.optional(v.number()),
    finished: v.optional(v.number()),
    failed: v.optional(v.number()),
    // one claim call's queue waits (claim time − ready time) as a histogram (observability/histogram.ts buckets)
    waits: v.optional(v.array(v.number())),
    // the client key of the jobs it counts: their pending/running also count in the key's totals (keyShards), and
    // their waits as the key's starts in the minute (throughput.byKey)
    clientKeyId: v.optional(v.id("clientKeys")),
    // a run of the lane's jobs that returned a result: how long it ran (ms), for the lane's run-time histogram
    runMs: v.optional(v.number()),
    // the jobs this change moved, for the metrics (observability/moves.ts), and other events they count
    jobs: v.optional(v.array(jobMove)),
    ...eventFields,
    // the energy one attempt of a job of this type used, as its worker reported it (trust/energy.ts)
    type: v.optional(v.string()),
    energyJ: v.optional(v.number()),
  })
    .index("by_org", ["orgId"])
    .index("by_lane", ["laneId"]),

  /** Pending and running jobs per client key, as the lanes count them (written by the summariser only). */
  keyShards: defineTable({
    orgId: v.id("orgs"),
    clientKeyId: v.id("clientKeys"),
    pending: v.number(),
    running: v.number(),
  })
    .index("by_client", ["clientKeyId"])
    .index("by_org", ["orgId"]),

  /** Energy given per job type, all time (joules, and how many attempts reported it): written only by the summariser. */
  typeEnergy: defineTable({
    orgId: v.id("orgs"),
    type: v.string(),
    energyJ: v.number(),
    reports: v.number(),
  })
    .index("by_org_type", ["orgId", "type"])
    .index("by_org_energy", ["orgId", "energyJ"]),

  // Counter totals: shard 0 is written by the summariser; other shards are left from older versions.
  laneShards: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    shard: v.number(),
    pending: v.number(),
    running: v.number(),
    // how long the lane's runs that returned a result ran, recent ones weighing most (observability/runTimes.ts): an
    // instance's default deadline is 3 × its p95
    runMs: v.optional(v.array(v.number())),
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

  /**
   * The metrics' totals (observability/fold.ts), written only by the summariser as it folds the counter changes: one
   * row per job type and client key of an org (jobs per status now, and ended so far), one per client key (the same,
   * summed), one per job type (wait and run histograms), one per org (all of it summed, and the counters of other
   * events). `activity` (job moves so far) ranks rows, so a scrape reads the busiest ones first.
   */
  metricCells: defineTable({
    orgId: v.id("orgs"),
    type: v.string(),
    clientKeyId: v.optional(v.id("clientKeys")),
    activity: v.number(),
    jobs: jobCounts,
    finished: finishedCounts,
  })
    .index("by_org_cell", ["orgId", "type", "clientKeyId"])
    .index("by_org_activity", ["orgId", "activity"]),

  metricClients: defineTable({
    orgId: v.id("orgs"),
    // none: jobs a host app submitted in its own mutations
    clientKeyId: v.optional(v.id("clientKeys")),
    activity: v.number(),
    jobs: jobCounts,
    finished: finishedCounts,
  })
    .index("by_org_client", ["orgId", "clientKeyId"])
    .index("by_org_activity", ["orgId", "activity"]),

  metricTypes: defineTable({
    orgId: v.id("orgs"),
    type: v.string(),
    activity: v.number(),
    wait: histogram,
    run: histogram,
    // the waits again, each weighing half as much an hour later: the console's recent wait per type
    recentWait: v.array(v.number()),
    recentAt: v.number(),
  })
    .index("by_org_type", ["orgId", "type"])
    .index("by_org_activity", ["orgId", "activity"]),

  metricOrgs: defineTable({
    orgId: v.id("orgs"),
    jobs: jobCounts,
    finished: finishedCounts,
    wait: histogram,
    run: histogram,
    ...orgEvents,
  }).index("by_org", ["orgId"]),

  throughput: defineTable({
    orgId: v.id("orgs"),
    minute: v.number(),
    shard: v.number(),
    finished: v.number(),
    // attempts that failed in this minute (a fail call or an expired lease), retried or not
    failed: v.optional(v.number()),
    // claims of this minute by queue wait: counts per bucket of observability/histogram.ts (rows of an older, coarser
    // layout have another length and are left out)
    waits: v.optional(v.array(v.number())),
    // claims of this minute per client key (jobs and instances started), for each key's share of the last hour
    byKey: v.optional(v.array(v.object({ clientKeyId: v.id("clientKeys"), started: v.number() }))),
  })
    .index("by_org_minute_shard", ["orgId", "minute", "shard"])
    .index("by_minute", ["minute"]),

  // The result cache (queue/resultCache.ts): one entry per key, its result beside it in cacheResults (read only on a hit)
  cacheEntries: defineTable({
    orgId: v.id("orgs"),
    key: v.string(),
    type: v.string(),
    sourceJobId: v.id("jobs"),
    resultBytes: v.number(),
    // quorum of at least 2 agreeing (false: one worker's answer, stored only for an org with cacheUnvalidated)
    validated: v.boolean(),
    createdAt: v.number(),
    expiresAt: v.number(),
  })
    .index("by_org_key", ["orgId", "key"])
    .index("by_org_type", ["orgId", "type"])
    .index("by_expires", ["expiresAt"]),
  cacheResults: defineTable({ entryId: v.id("cacheEntries"), result: v.any() }).index("by_entry", ["entryId"]),

  jobs: defineTable({
    orgId: v.id("orgs"),
    laneId: v.id("lanes"),
    type: v.string(),
    // Bodies live in `jobBodies` (core/bodies.ts); these three are only on rows written before that, until
    // the bodies migration (convex/migrations.ts) moves them. `error` stays here cut short (the full text beside).
    payload: v.optional(v.any()),
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
    // a replicated job's progress and status text are its leading running instance's (trust/instanceProgress.ts)
    progressInstance: v.optional(v.id("jobInstances")),
    result: v.optional(v.any()),
    error: v.optional(v.string()),
    cancelRequested: v.optional(v.boolean()),
    offerExpiresAt: v.optional(v.number()),
    // the pending lease check of a running job, canceled when the job ends before its lease does
    leaseCheck: v.optional(v.id("_scheduled_functions")),
    startedAt: v.optional(v.number()),
    finishedAt: v.optional(v.number()),
    // Credit for the last attempt a worker reported (trust/credit.ts): CPU time as measured and clamped, or
    // its wall time when it could not be measured (`cpuMeasured: false`, e.g. an Ollama request).
    cpuMs: v.optional(v.number()),
    cpuMeasured: v.optional(v.boolean()),
    // The client key that submitted it (jobs:submit, jobs:submitBatch, HTTP): whose webhook hears its end, whose
    // share and maxRunning it counts against.
    clientKeyId: v.optional(v.id("clientKeys")),
    // whom it is shared with inside its client key (e.g. the submitting app's end user), at most 64 bytes
    fairnessKey: v.optional(v.string()),
    // its client key's counters count it (pending and running per key, maxRunning): set on jobs submitted since those
    // counters exist, so a job queued before an upgrade never moves a count it was not added to
    keyCounted: v.optional(v.boolean()),
    // what the job needs of its machine, as submitted (its lane holds the rounded-up class)
    requirements: v.optional(jobRequirements),
    // the running job is frozen on its worker (the donor is using the machine) since then; its heartbeats say so
    suspendedSince: v.optional(v.number()),
    // an app job's pinned version (jobs of type `app.<name>`)
    app: v.optional(appPin),
    // a checkpoint row exists for this job (set once, by its first checkpoint): claims read it only then
    checkpointed: v.optional(v.boolean()),
    // the body sizes (Convex value bytes), so a claim can budget payloads before it reads them
    payloadBytes: v.optional(v.number()),
    resultBytes: v.optional(v.number()),
    // its parents as submitted (workers:inputs reads their results), and while waiting how many are unmet
    dependsOn: v.optional(dependsOn),
    unmetParents: v.optional(v.number()),
    // why it ended, as a stable code (dependency_failed, inputs_too_large), and the parent that failed it
    errorCode: v.optional(v.string()),
    failedParent: v.optional(v.id("jobs")),
    // the schedule whose tick submitted it
    scheduleId: v.optional(v.id("schedules")),
    // a replicated job's rules and progress (trust/validation.ts); none: quorum 1, runs once as always
    validation: v.optional(jobValidation),
    // the metrics count it (every job submitted since they exist; older ones once migrations:meterJobs ran)
    metered: v.optional(v.boolean()),
    // the W3C trace context it was submitted with (`00-<trace id>-<parent id>-<flags>`), handed to its worker
    traceparent: v.optional(v.string()),
    // with an externalId: SHA-256 of its spec's identity (queue/idempotency.ts), so a repeat with another spec is refused
    specHash: v.optional(v.string()),
    // submitted with `cache` (queue/resultCache.ts): its cache key and how long its result stays reusable
    cache: v.optional(v.object({ key: v.string(), ttlMs: v.number() })),
    // a cache hit: created succeeded with the result of this job, which ran
    cachedFrom: v.optional(v.id("jobs")),
    // single flight: waiting for this identical job's result instead of running too
    cacheWaitsOn: v.optional(v.id("jobs")),
  })
    // A lane's ready queue: by priority, then per client key and fairness key in FIFO order (queue/fairQueue.ts)
    .index("by_lane_fair", ["laneId", "queue", "negPriority", "clientKeyId", "fairnessKey", "availableAt"])
    .index("by_lane_delayed", ["laneId", "queue", "availableAt"])
    .index("by_lease", ["leaseId"])
    .index("by_worker_status", ["workerId", "status"])
    .index("by_org_external", ["orgId", "externalId"])
    // an externalId's scope: the client key that submitted it (none: a host app's own submitJob)
    .index("by_org_client_external", ["orgId", "clientKeyId", "externalId"])
    // an identical cacheable job in flight (single flight), and the jobs waiting on one
    .index("by_org_cache_status", ["orgId", "cache.key", "status"])
    .index("by_cache_waits", ["cacheWaitsOn"])
    .index("by_org_batch", ["orgId", "batchId"])
    .index("by_org_status", ["orgId", "status", "finishedAt"])
    .index("by_finished", ["finishedAt"])
    // The console's job list (convex/console.ts): each filter it offers is served by one of these, newest first.
    .index("by_org", ["orgId"])
    .index("by_org_type", ["orgId", "type"])
    .index("by_org_status_created", ["orgId", "status"])
    .index("by_org_status_type", ["orgId", "status", "type"])
    .index("by_org_client", ["orgId", "clientKeyId"])
    .index("by_org_client_fairness", ["orgId", "clientKeyId", "fairnessKey"])
    // a client key's oldest ready job (the console's oldest wait per key)
    .index("by_client_queue", ["clientKeyId", "queue", "availableAt"]),

  /**
   * A job's bodies, one row per part beside the job (core/bodies.ts): its payload (written at submit), its result
   * (on success) and its last error's full text (when longer than the job row keeps). Read only where a body is
   * needed, so the job row that every heartbeat, offer and lease rewrites stays a few KiB.
   */
  jobBodies: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    part: v.union(v.literal("payload"), v.literal("result"), v.literal("error")),
    value: v.any(),
    bytes: v.number(),
  }).index("by_job_part", ["jobId", "part"]),

  jobOutput: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    seq: v.number(),
    chunk: v.string(),
    // a replicated job's chunk: the instance (worker) that wrote it (trust/instances.ts); none for quorum 1
    instance: v.optional(v.id("jobInstances")),
  }).index("by_job_seq", ["jobId", "seq"]),

  /**
   * The latest checkpoint a job's run saved (base64, at most 512 KiB decoded), one row per job beside it (never
   * in the job row, which has its own size budget); the next run of the job gets it with its claim.
   */
  checkpoints: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    data: v.string(),
    bytes: v.number(),
    attempt: v.number(),
    savedAt: v.number(),
  }).index("by_job", ["jobId"]),

  jobEvents: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    kind: v.string(),
    at: v.number(),
    workerId: v.optional(v.id("workers")),
    attempt: v.optional(v.number()),
    detail: v.optional(v.string()),
    // retried: the backoff before the job is claimable again
    backoffMs: v.optional(v.number()),
  }).index("by_job", ["jobId"]),

  /**
   * An operator's bulk retry/cancel/purge over a job filter (convex/consoleActions.ts): worked through in
   * bounded scheduled batches; `affected` jobs changed so far, `scanned` jobs looked at, `done` when over.
   */
  bulkOps: defineTable({
    orgId: v.id("orgs"),
    action: v.union(v.literal("retry"), v.literal("cancel"), v.literal("purge")),
    filter: jobFilter,
    // who started it: a managing worker's key (older operations and canManage grants) or an operator key
    by: v.optional(v.id("workers")),
    byOperator: v.optional(v.id("operatorKeys")),
    cursor: v.optional(v.string()),
    scanned: v.number(),
    affected: v.number(),
    batches: v.number(),
    done: v.boolean(),
    startedAt: v.number(),
    finishedAt: v.optional(v.number()),
    // when its next step was scheduled, and the step chain's generation (the watchdog re-arms a stale one)
    armedAt: v.optional(v.number()),
    generation: v.optional(v.number()),
    // re-arms since its last step that ran; at BULK_STALLS_MAX it is given up with `error`
    stalls: v.optional(v.number()),
    error: v.optional(v.string()),
  })
    .index("by_org", ["orgId"])
    .index("by_done_armed", ["done", "armedAt"]),

  /** A client key's completion webhook (jobs:setWebhook): the secret is kept to sign each delivery. */
  webhooks: defineTable({
    orgId: v.id("orgs"),
    clientKeyId: v.id("clientKeys"),
    url: v.string(),
    secret: v.string(),
    updatedAt: v.number(),
  }).index("by_client", ["clientKeyId"]),

  /**
   * The webhook delivery of one job's end (webhooks/webhooks.ts): one row per job, so at most one delivery is in
   * flight per job; a job that ends again (a retried dead letter) reuses it. `attempts` keeps every try.
   */
  webhookDeliveries: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    clientKeyId: v.id("clientKeys"),
    // pending: a delivery run is scheduled (at nextAt); sending: an attempt is in flight; delivered; failed:
    // gave up after 24 h; waiting: the job was running again (a retried dead letter) when its turn came
    state: v.union(v.literal("pending"), v.literal("sending"), v.literal("delivered"), v.literal("failed"), v.literal("waiting")),
    // the job ended again while an attempt was in flight: deliver once more when it is over
    again: v.optional(v.boolean()),
    firstAt: v.number(),
    nextAt: v.optional(v.number()),
    attempts: v.array(
      v.object({ at: v.number(), ms: v.number(), status: v.optional(v.number()), error: v.optional(v.string()), jobStatus: v.string() }),
    ),
    // when the attempt in flight began (state sending), and the delivery runs' generation (the watchdog
    // re-arms a delivery whose run died: an older run's answer is then not recorded)
    sendingSince: v.optional(v.number()),
    generation: v.optional(v.number()),
  })
    .index("by_job", ["jobId"])
    .index("by_state_next", ["state", "nextAt"])
    .index("by_state_sending", ["state", "sendingSince"]),

  /** jobs:setWebhook's token bucket per client key (webhooks/webhookRateLimit.ts). */
  webhookRateLimits: defineTable({
    clientKeyId: v.id("clientKeys"),
    tokens: v.number(),
    updatedAt: v.number(),
  }).index("by_client", ["clientKeyId"]),

  /**
   * Donor credit per worker and UTC day (`day` = whole days since the epoch), written by the mutation that
   * ends an attempt (workers:complete / workers:fail): `cpuMs` counts every credited millisecond, of which
   * `wallMs` were credited by wall time because the CPU could not be measured.
   */
  creditDays: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    day: v.number(),
    ...creditFigures,
  })
    .index("by_worker_day", ["workerId", "day"])
    .index("by_org_day", ["orgId", "day"])
    .index("by_day", ["day"]),

  /**
   * The same credit summed per worker and week (`week`: the UTC day of its Monday), by CPU time: the week's
   * leaderboard reads its top rows (trust/creditWeeks.ts).
   */
  creditWeeks: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    week: v.number(),
    ...creditFigures,
  })
    .index("by_worker_week", ["workerId", "week"])
    .index("by_org_week_cpu", ["orgId", "week", "cpuMs"])
    .index("by_week", ["week"]),

  /** The same credit summed over all time, one row per worker (the all-time leaderboard, the workers page). */
  creditTotals: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    ...creditFigures,
    // replicated results waiting for their job's quorum: their claimed CPU time and how many (trust/instanceCredit.ts)
    pendingCpuMs: v.optional(v.number()),
    pendingJobs: v.optional(v.number()),
  })
    .index("by_worker", ["workerId"])
    .index("by_org", ["orgId"])
    // the all-time leaderboard: most CPU time first, whatever the number of workers
    .index("by_org_cpu", ["orgId", "cpuMs"]),

  /**
   * A batch's counters (pipelines/dependencies.ts), sharded: a row per (org, batchId, shard) its jobs hash to; sums over a
   * batch's rows count its jobs not yet ended and how many ended each way. A row without a shard is from before sharding.
   */
  batches: defineTable({
    orgId: v.id("orgs"),
    batchId: v.string(),
    shard: v.optional(v.number()),
    unfinished: v.number(),
    succeeded: v.number(),
    failed: v.number(),
    // the first of its jobs that ended dead or canceled (its children are canceled naming it)
    firstFailed: v.optional(v.id("jobs")),
    // the results of its succeeded jobs, summed (an app child's inputs must fit its stdin)
    resultBytes: v.optional(v.number()),
    // its succeeded jobs purged since (by retention or an operator): a child of the batch would miss their results
    purged: v.optional(v.number()),
  }).index("by_org_batch", ["orgId", "batchId", "shard"]),

  /**
   * A batch submitted with `seal` (jobs:submitBatch, jobs:sealBatch; pipelines/batchSeals.ts): its children wait for the seal
   * as well as for its jobs, and once `sealedAt` is set it takes no more jobs. A batch without a row is never sealed.
   */
  batchSeals: defineTable({
    orgId: v.id("orgs"),
    batchId: v.string(),
    sealedAt: v.optional(v.number()),
  }).index("by_org_batch", ["orgId", "batchId"]),

  /** A waiting job's unmet parent (a job or a batch): deleted once met, or when the child ends. */
  jobDependencies: defineTable({
    orgId: v.id("orgs"),
    childId: v.id("jobs"),
    parentId: v.optional(v.id("jobs")),
    batchId: v.optional(v.string()),
    // the child's own batch, and where the wait leads on (pipelines/dependencyCycles.ts): "b:<batch>", or "j:<job>" for a
    // parent that was waiting itself; none for a parent that was not (it waits on nothing). Absent on older rows.
    childBatch: v.optional(v.string()),
    via: v.optional(v.string()),
  })
    .index("by_parent", ["parentId"])
    .index("by_org_batch", ["orgId", "batchId"])
    .index("by_child", ["childId"])
    .index("by_child_batch_via", ["orgId", "childBatch", "via"]),

  /**
   * A job's parents as it was submitted with them (pipelines/parentRefs.ts): a listed job or a batch, kept until the child
   * ends (whether or not the parent was met), so retention and purge keep the results the child reads as its inputs.
   */
  parentRefs: defineTable({
    orgId: v.id("orgs"),
    childId: v.id("jobs"),
    parentId: v.optional(v.id("jobs")),
    batchId: v.optional(v.string()),
  })
    .index("by_parent", ["parentId"])
    .index("by_org_batch", ["orgId", "batchId"])
    .index("by_child", ["childId"]),

  /**
   * A parent's end whose children are settled in scheduled pages (pipelines/settlements.ts): one row while pages are left,
   * so the watchdog re-arms a page that failed. `batchId`: the batch's edges (the batch ended or failed), else the
   * job `parentId`'s.
   */
  settlements: defineTable({
    orgId: v.id("orgs"),
    parentId: v.id("jobs"),
    ok: v.boolean(),
    why: v.string(),
    batchId: v.optional(v.string()),
    // when its next page was scheduled, and the page chain's generation (a page of an older one does nothing)
    armedAt: v.number(),
    generation: v.number(),
    // times the watchdog re-armed it: each halves its pages (a page too big for one transaction gets through)
    stalls: v.optional(v.number()),
  }).index("by_armed", ["armedAt"]),

  /**
   * schedules:create: a cron line that submits a job at each tick (pipelines/schedules.ts). The job spec lives beside it
   * (scheduleBodies), so lists read small rows; `job` is only on rows written before that.
   */
  schedules: defineTable({
    orgId: v.id("orgs"),
    name: v.string(),
    cron: v.string(),
    timezone: v.string(),
    overlap: v.union(v.literal("skip"), v.literal("allow")),
    job: v.optional(v.any()),
    // the job's type and its spec's size (Convex value bytes), so lists and the catch-up never read the spec
    type: v.optional(v.string()),
    jobBytes: v.optional(v.number()),
    paused: v.boolean(),
    // why it was paused when the farm paused it (its client key was revoked); none when a user paused it
    pausedReason: v.optional(v.string()),
    // the last tick that could not submit its job, and why (cleared by the next tick that submits)
    lastError: v.optional(v.string()),
    lastErrorCode: v.optional(v.string()),
    lastErrorAt: v.optional(v.number()),
    nextRunAt: v.optional(v.number()),
    // the pending tick; a tick of another id does nothing
    tick: v.optional(v.id("_scheduled_functions")),
    lastRunAt: v.optional(v.number()),
    lastJobId: v.optional(v.id("jobs")),
    lastSkippedAt: v.optional(v.number()),
    clientKeyId: v.optional(v.id("clientKeys")),
    createdAt: v.number(),
  })
    .index("by_org_name", ["orgId", "name"])
    .index("by_next", ["paused", "nextRunAt"])
    .index("by_client", ["clientKeyId"]),

  /** A schedule's job spec (its payload up to 256 KiB), one row beside the schedule, read only by its ticks. */
  scheduleBodies: defineTable({
    orgId: v.id("orgs"),
    scheduleId: v.id("schedules"),
    job: v.any(),
    bytes: v.number(),
  }).index("by_schedule", ["scheduleId"]),
  /**
   * One run of a replicated job (trust/instances.ts): who ran it, how it ended, the SHA-256 of its result's
   * canonical JSON (the result itself kept on the first instance of each distinct hash), whether it agreed
   * with the quorum, and its credit (granted only once its result is valid).
   */
  jobInstances: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    type: v.string(),
    round: v.number(),
    n: v.number(),
    workerId: v.id("workers"),
    workerName: v.string(),
    machineId: v.string(),
    leaseId: v.string(),
    // released: given back without a result (workers:release, a revoke): no vote, its worker may start it again
    status: v.union(v.literal("running"), v.literal("completed"), v.literal("failed"), v.literal("canceled"), v.literal("released")),
    startedAt: v.number(),
    endedAt: v.optional(v.number()),
    resultHash: v.optional(v.string()),
    // the result's size; the value itself is in instanceResults (rows written before kept it here, as `result`)
    resultBytes: v.optional(v.number()),
    result: v.optional(v.any()),
    // failed: what its worker said (or why the server failed it), cut short
    error: v.optional(v.string()),
    // distinct "donor": the donor it counted for, so giving it back frees that donor again
    donorKey: v.optional(v.string()),
    // past this a replacement starts beside it (trust/instanceDeadline.ts); late: it passed it and runs on
    deadlineAt: v.optional(v.number()),
    late: v.optional(v.boolean()),
    valid: v.optional(v.boolean()),
    // alone: accepted unreplicated (adaptive trust)
    alone: v.optional(v.boolean()),
    credit: v.optional(v.union(v.literal("pending"), v.literal("granted"), v.literal("denied"))),
    creditCpuMs: v.optional(v.number()),
    creditMeasured: v.optional(v.boolean()),
    // why it earned nothing, for the donor
    creditNote: v.optional(v.string()),
    // instances run side by side, each under a lease of its own (checked like a job's, janitor.checkInstanceLease)
    leaseExpiresAt: v.optional(v.number()),
    leaseCheck: v.optional(v.id("_scheduled_functions")),
    // canceled at quorum: its credit is capped at the agreeing instances' CPU time (capMs), once its worker reports
    atQuorum: v.optional(v.boolean()),
    capMs: v.optional(v.number()),
    // a canceled instance's worker answered (fail, complete or release), or its lease ran out: nothing more to hear
    reported: v.optional(v.boolean()),
    // what its heartbeats last said
    progress: v.optional(v.number()),
    statusText: v.optional(v.string()),
  })
    .index("by_job", ["jobId", "round"])
    .index("by_worker_credit", ["workerId", "credit"])
    .index("by_lease", ["leaseId"])
    .index("by_worker_status", ["workerId", "status"]),

  /**
   * The distinct results of a replicated job's round, one row per result hash (its canonical value), beside the
   * instances: an instance row stays small however large its result, so judging a round reads only hashes.
   */
  instanceResults: defineTable({
    orgId: v.id("orgs"),
    jobId: v.id("jobs"),
    round: v.number(),
    resultHash: v.string(),
    value: v.any(),
    bytes: v.number(),
  }).index("by_job_hash", ["jobId", "round", "resultHash"]),

  /** Consecutive valid results per worker and job type (adaptive replication), with its totals. */
  trustStreaks: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    type: v.string(),
    streak: v.number(),
    valid: v.number(),
    invalid: v.number(),
    lastInvalidAt: v.optional(v.number()),
  })
    .index("by_worker_type", ["workerId", "type"])
    // a worker's least trusted job types first (the console's lowest streaks)
    .index("by_worker_streak", ["workerId", "streak"])
    .index("by_org", ["orgId"]),

  /** Jobs claimed per UTC day by a worker whose quota is below full (read only for such workers). */
  quotaUse: defineTable({
    orgId: v.id("orgs"),
    workerId: v.id("workers"),
    day: v.number(),
    claimed: v.number(),
  }).index("by_worker_day", ["workerId", "day"]),
});
