/** Documented caps (docs/API.md lists every one). */
export const LIMITS = {
  payloadBytes: 256 * 1024,
  resultBytes: 256 * 1024,
  batchPayloadBytes: 8 * 1024 * 1024,
  errorChars: 8 * 1024,
  typeChars: 128,
  nameChars: 128,
  externalIdChars: 256,
  batchIdChars: 256,
  statusTextChars: 512,
  outputChunkChars: 8 * 1024,
  outputChunksPerJob: 10_000,
  outputChunksReturned: 500,
  batchCount: 500,
  claimMax: 32,
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
  defaultEnrollmentTtlMs: 24 * 60 * 60 * 1000,
  lanesPerOrg: 200,
  workersListed: 200,
  batchStatusScan: 5_000,
  deadLettersListed: 100,
} as const;

/** Timing knobs of the queue. */
export const TIMING = {
  lastSeenWriteEveryMs: 60_000,
  onlineWindowMs: 3 * 60_000,
  backoffBaseMs: 2_000,
  backoffMaxMs: 10 * 60_000,
  // Jobs of the same priority made ready within this window are treated as simultaneous:
  // a claim picks among them at random so concurrent workers rarely collide on one document.
  fifoSlackMs: 1_000,
  defaultRetentionMs: 7 * 24 * 60 * 60 * 1000,
} as const;

/** How many of the best ready jobs a claim chooses among, and how many counter shards exist. */
export const CLAIM_SPREAD = 4;
export const LANE_SHARDS = 4;
export const ORG_SHARDS = 4;
export const THROUGHPUT_SHARDS = 2;
