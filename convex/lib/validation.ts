import { v, type Infer } from "convex/values";
import type { Doc } from "../_generated/dataModel";
import { fail } from "./errors";

/**
 * Replicated jobs (issue 20): a job with `validation.quorum` ≥ 2 runs as instances side by side, each under a
 * lease of its own (lib/instances.ts), each on a different worker and machine, until `quorum` results agree. A
 * job without it (quorum 1) carries no `validation` on its row and takes exactly the path it always took.
 */

export const TRUST = {
  maxQuorum: 5,
  maxInstances: 10,
  /** Consecutive valid results per job type from which a worker is trusted (BOINC's adaptive replication). */
  trustedStreak: 10,
  /** A worker's daily job quota at full trust; an invalid result halves it, each valid one doubles it back. */
  dailyJobQuota: 5_000,
} as const;

/** What a submitter says (`validation` on jobs:submit, jobs:submitBatch, POST /api/jobs). */
export const validationSpec = v.object({
  quorum: v.number(),
  maxInstances: v.optional(v.number()),
  homogeneous: v.optional(v.boolean()),
  adaptive: v.optional(v.boolean()),
});
export type ValidationSpec = Infer<typeof validationSpec>;

/** What the job row keeps while it is replicated: the rules, and who already ran it (never again). */
export const jobValidation = v.object({
  quorum: v.number(),
  maxInstances: v.number(),
  homogeneous: v.optional(v.boolean()),
  adaptive: v.optional(v.boolean()),
  // a retried no_quorum dead letter starts a new round; instances of earlier rounds are kept, not counted
  round: v.number(),
  // instances started in this round, and the workers and machines that run or ran one with a result (never offered it again)
  started: v.number(),
  workers: v.array(v.id("workers")),
  machines: v.array(v.string()),
  // homogeneous: the os and arch of the first instance's machine, which every later one must share
  platform: v.optional(v.object({ os: v.string(), arch: v.string() })),
  outcome: v.optional(v.union(v.literal("valid"), v.literal("no_quorum"))),
  // adaptive: the first instance's worker was trusted and the coin said its result is accepted on its own
  alone: v.optional(v.boolean()),
});
export type JobValidation = Infer<typeof jobValidation>;

/** The rules of a submitted spec, or undefined for quorum 1 (the job runs once, as always). */
export function checkValidation(spec: ValidationSpec | undefined): JobValidation | undefined {
  if (spec === undefined) return undefined;
  const { quorum } = spec;
  if (!Number.isInteger(quorum) || quorum < 1 || quorum > TRUST.maxQuorum) {
    fail("invalid_argument", `validation.quorum must be a whole number from 1 to ${TRUST.maxQuorum}, got ${quorum}`);
  }
  const maxInstances = spec.maxInstances ?? Math.min(quorum + 2, TRUST.maxInstances);
  if (!Number.isInteger(maxInstances) || maxInstances < quorum || maxInstances > TRUST.maxInstances) {
    fail("invalid_argument", `validation.maxInstances must be a whole number from quorum (${quorum}) to ${TRUST.maxInstances}, got ${maxInstances}`);
  }
  if (quorum === 1) return undefined;
  return {
    quorum,
    maxInstances,
    ...(spec.homogeneous ? { homogeneous: true } : {}),
    ...(spec.adaptive ? { adaptive: true } : {}),
    round: 1,
    started: 0,
    workers: [],
    machines: [],
  };
}

/**
 * May this worker run the next instance of this job? Never a worker or a machine that runs or ran one of
 * this round; with `homogeneous`, only a machine of the first one's os and arch. Reads nothing: a job
 * without validation is always runnable.
 */
export function mayRun(job: Doc<"jobs">, worker: Pick<Doc<"workers">, "_id" | "machineId" | "facts">): boolean {
  const rules = job.validation;
  if (!rules) return true;
  if (rules.workers.includes(worker._id) || rules.machines.includes(worker.machineId)) return false;
  if (rules.platform && (worker.facts?.os !== rules.platform.os || worker.facts?.arch !== rules.platform.arch)) return false;
  return true;
}

/** The spec an app version keeps as its default: checked, quorum 1 kept as nothing. */
export function defaultSpec(spec: ValidationSpec | undefined): ValidationSpec | undefined {
  const rules = checkValidation(spec);
  if (!rules) return undefined;
  return { quorum: rules.quorum, maxInstances: rules.maxInstances, ...(rules.homogeneous ? { homogeneous: true } : {}), ...(rules.adaptive ? { adaptive: true } : {}) };
}

/** The same rules, ready for a new round (a retried no_quorum dead letter). */
export function newRound(rules: JobValidation): JobValidation {
  return { quorum: rules.quorum, maxInstances: rules.maxInstances, ...(rules.homogeneous ? { homogeneous: true } : {}), ...(rules.adaptive ? { adaptive: true } : {}), round: rules.round + 1, started: 0, workers: [], machines: [] };
}
