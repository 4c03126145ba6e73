/** Documented caps (docs/API.md lists every one). */
export const LIMITS = {
  payloadBytes: 256 * 1024,
  resultBytes: 256 * 1024,
  // one jobs:submitBatch writes its payloads whole: 2 MiB keeps a batch of 500 at every other cap under the
  // 4 MiB a transaction may write (TX_BUDGET; it was 8 MiB, which alone passed Convex's 8 MiB write limit)
  batchPayloadBytes: 2 * 1024 * 1024,
  errorChars: 8 * 1024,
  typeChars: 128,
  nameChars: 128,
  externalIdChars: 256,
  batchIdChars: 256,
  statusTextChars: 512,
  /** An output chunk, in UTF-8 bytes: 500 of them (what jobs:get returns) are 4 MiB, whatever the script. */
  outputChunkBytes: 8 * 1024,
  outputChunksPerJob: 10_000,
  outputChunksReturned: 500,
  batchCount: 500,
  claimMax: 32,
  /**
   * Checkpoint text (base64 characters) one workers:claim hands out, all its jobs together. A resumed app job
   * carries up to 512 KiB decoded (699 052 characters of base64), so 32 of them (21.3 MiB) would pass Convex's
   * 16 MiB limit on a function's return value (and on the data one transaction reads), while 32 payloads alone
   * may take 8 MiB. With this budget a claim returns at most 4 MiB of checkpoints (five of the largest), and
   * with claimBodyBytes at most 6 MiB of payloads and checkpoints together. A checkpointed job that does not fit is left where it was (offered to this worker, or
   * ready) for the next claim; a single checkpoint always fits, so every claim makes progress.
   */
  claimCheckpointChars: 4 * 1024 * 1024,
  /**
   * Bodies one workers:claim hands out, payloads and checkpoints together (bytes): with the rest of what a claim
   * reads it stays under TX_BUDGET.readBytes (half of Convex's 16 MiB). The largest job (a 256 KiB payload and a
   * 512 KiB checkpoint) always fits; jobs past the budget wait for the next claim like checkpointed ones.
   */
  claimBodyBytes: 6 * 1024 * 1024,
  priorityMin: 0,
  priorityMax: 1000,
  maxAttempts: 100,
  defaultMaxAttempts: 3,
  leaseMsMin: 5_000,
  leaseMsMax: 60 * 60 * 1000,
  defaultLeaseMs: 60_000,
  delayMsMax: 365 * 24 * 60 * 60 * 1000,
  capabilitiesPerJob: 16,
  capabilitiesPerWorker: 256,
  maxConcurrentJobs: 32,
  /** Cores an enrollment may let its worker's credit count (`maxCores`), and the default when it says none. */
  maxCoresGranted: 4_096,
  defaultMaxCores: 256,
  defaultEnrollmentTtlMs: 24 * 60 * 60 * 1000,
  lanesPerOrg: 200,
  workersListed: 200,
  /** Presence rows the summariser counts (online first); an org with more shows "at least" this many. */
  rosterPresenceScan: 20_000,
  /** Worker rows (and their bytes) the summariser reads to learn which lanes an online worker can serve. */
  rosterWorkerReads: 1_000,
  rosterWorkerBytes: 2 * 1024 * 1024,
  batchStatusScan: 5_000,
  deadLettersListed: 100,
  /** Dead letters the per-org summary (and so farm:overview) carries, newest first, errors cut short. */
  summaryDeadLetters: 20,
  summaryErrorChars: 500,
  /** A worker's doorbell: at most one offer and one cancel notice per slot, plus a resync flag. */
  inboxRows: 2 * 32 + 1,
  /** Offers the dispatcher makes in one transaction before it reschedules itself. */
  dispatchBatch: 32,
  /** cpuMs a worker may report for one attempt (a sanity cap; the server clamps to wall time × cores anyway). */
  cpuMsMax: 365 * 24 * 60 * 60 * 1000,
  /** Waiting workers a new lane learns about in the submit that creates it (the rest in a scheduled pass). */
  laneBackfill: 64,
  /** Parent jobs one job may list in dependsOn.jobs (issue 21). */
  dependsOnJobs: 100,
  /** An app job's parents' results handed on its stdin (`inputs`) total at most this; more fails inputs_too_large. */
  appInputsBytes: 32 * 1024 * 1024,
  /** Schedules per org. */
  schedulesPerOrg: 100,
} as const;

/** Timing knobs of the queue. */
export const TIMING = {
  /** Worker calls other than presence write lastSeenAt at most this often. */
  lastSeenWriteEveryMs: 60_000,
  /** An engine that holds only its subscriptions calls workers:presence this often, and no more. */
  presenceEveryMs: 5 * 60_000,
  /** Online = a call within this window (one presence interval plus a minute of slack). */
  onlineWindowMs: 6 * 60_000,
  /** A busy dispatcher's next round comes this much later, so that one round serves a few freed workers. */
  dispatchBatchDelayMs: 25,
  /** An offer not claimed within this time passes to another waiting worker. */
  offerTtlMs: 5_000,
  /** The per-org summary is refreshed this long after the first change of a quiet spell… */
  summaryFirstDelayMs: 1_000,
  /** …and at most once per this interval while things change. */
  summaryMinGapMs: 5_000,
  /** A presence call alone (nothing else changed) refreshes the summary within this time. */
  summaryPresenceDelayMs: 30_000,
  backoffBaseMs: 2_000,
  backoffMaxMs: 10 * 60_000,
  defaultRetentionMs: 7 * 24 * 60 * 60 * 1000,
  /** The shortest result-cache ttl a job or an app's default may ask for (the longest is the retention age). */
  cacheTtlMinMs: 1_000,
  /** The watchdog (convex/watchdog.ts) runs this often and re-arms every loop latch older than its stale age. */
  watchdogEveryMs: 60_000,
  /** A scheduled dispatcher that has not run (or, busy, said it is alive) for this long is re-armed… */
  dispatchStaleMs: 30_000,
  /** …so a busy one says so at most this often (one write of its state row). */
  dispatchAliveEveryMs: 10_000,
  /** A summary refresh this long past its due time is re-armed. */
  summaryStaleMs: 30_000,
  /** A bulk operation whose next step was scheduled this long ago and has not run is re-armed. */
  bulkStaleMs: 60_000,
  /** A webhook delivery this long past its run's due time (pending) or its attempt's timeout (sending) is re-armed. */
  webhookStaleMs: 60_000,
  /** A dependency settlement whose next page was scheduled this long ago and has not run is re-armed. */
  settleStaleMs: 60_000,
} as const;

