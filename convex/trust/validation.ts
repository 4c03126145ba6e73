import { v, type Infer } from "convex/values";
import type { Doc } from "../_generated/dataModel";
import { fail } from "../core/errors";

/**
 * Replicated jobs (issue 20): a job with `validation.quorum` ≥ 2 runs as instances side by side, each under a
 * lease of its own (trust/instances.ts), each on a different worker and machine, until `quorum` results agree. A
 * job without it (quorum 1) carries no `validation` on its row and takes exactly the path it always took.
 */

export const TRUST = {
  maxQuorum: 5,
  maxInstances: 10,
  /** Consecutive valid results per job type from which a worker is trusted (BOINC's adaptive replication). */
  trustedStreak: 10,
  /** A worker's daily job quota at full trust; an invalid result halves it, each valid one doubles it back. */
  dailyJobQuota: 5_000,
  /** The longest an instance runs before a replacement starts beside it (BOINC's delay bound), whatever the default. */
  maxInstanceDeadlineMs: 24 * 60 * 60 * 1000,
  minInstanceDeadlineMs: 1_000,
} as const;

/**
 * Instance rows one round of a job may hold: results (≤ maxInstances), failures (≤ maxErrorInstances), and the
 * instances given back or past their deadline that a replacement followed. A worker that gives one back and starts
 * again reuses its row; past this many, the round starts no more (and ends without a verdict once none runs).
 */
export const ROUND_ROWS = 4 * TRUST.maxInstances;

/** What a submitter says (`validation` on jobs:submit, jobs:submitBatch, POST /api/jobs). */
export const validationSpec = v.object({
  quorum: v.number(),
  maxInstances: v.optional(v.number()),
  // failed instances (on as many workers) after which the job is dead; default maxInstances
  maxErrorInstances: v.optional(v.number()),
  homogeneous: v.optional(v.boolean()),
  adaptive: v.optional(v.boolean()),
  // "donor": instances on different donors (enrollment labels), not only different machines
  distinct: v.optional(v.union(v.literal("machine"), v.literal("donor"))),
  // instances started beyond the quorum for latency, canceled once the quorum agrees (BOINC's target_nresults)
  spare: v.optional(v.number()),
  // how long an instance may run before a replacement starts beside it (default: see instanceDeadline.ts)
  instanceDeadlineMs: v.optional(v.number()),
});
export type ValidationSpec = Infer<typeof validationSpec>;

/** What the job row keeps while it is replicated: the rules, and who already ran it (never again). */
export const jobValidation = v.object({
  quorum: v.number(),
  maxInstances: v.number(),
  // none on rows from before it existed: maxInstances
  maxErrorInstances: v.optional(v.number()),
  homogeneous: v.optional(v.boolean()),
  adaptive: v.optional(v.boolean()),
  // none: distinct machines
  distinct: v.optional(v.literal("donor")),
  spare: v.optional(v.number()),
  instanceDeadlineMs: v.optional(v.number()),
  // a retried dead letter starts a new round; instances of earlier rounds are kept, not counted
  round: v.number(),
  // instance rows of this round; the workers, machines (and, distinct by donor, donors) that run or ran one of
  // it, its failed ones included: never offered it again in this round (those that gave theirs back may be)
  started: v.number(),
  workers: v.array(v.id("workers")),
  machines: v.array(v.string()),
  donors: v.optional(v.array(v.string())),
  // homogeneous: the os and arch of the first instance's machine, which every later one must share
  platform: v.optional(v.object({ os: v.string(), arch: v.string() })),
  outcome: v.optional(v.union(v.literal("valid"), v.literal("no_quorum"), v.literal("too_many_errors"))),
  // adaptive: the first instance's worker was trusted and the coin said its result is accepted on its own
  alone: v.optional(v.boolean()),
});
export type JobValidation = Infer<typeof jobValidation>;

/** The rules as submitted, without the round's bookkeeping (what a new round starts from, and an app's default). */
type Rules = Pick<JobValidation, "quorum" | "maxInstances" | "maxErrorInstances" | "homogeneous" | "adaptive" | "distinct" | "spare" | "instanceDeadlineMs">;

function rulesOf(r: Rules): Rules {
  return {
    quorum: r.quorum,
    maxInstances: r.maxInstances,
    ...(r.maxErrorInstances !== undefined ? { maxErrorInstances: r.maxErrorInstances } : {}),
    ...(r.homogeneous ? { homogeneous: true } : {}),
    ...(r.adaptive ? { adaptive: true } : {}),
    ...(r.distinct ? { distinct: r.distinct } : {}),
    ...(r.spare ? { spare: r.spare } : {}),
    ...(r.instanceDeadlineMs !== undefined ? { instanceDeadlineMs: r.instanceDeadlineMs } : {}),
  };
}

function wholeIn(value: number, name: string, min: number, max: number, why = ""): number {
  if (!Number.isInteger(value) || value < min || value > max) fail("invalid_argument", `validation.${name} must be a whole number from ${min}${why} to ${max}, got ${value}`);
  return value;
}

/** The rules of a submitted spec, or undefined for quorum 1 (the job runs once, as always). */
export function checkValidation(spec: ValidationSpec | undefined): JobValidation | undefined {
  if (spec === undefined) return undefined;
  const quorum = wholeIn(spec.quorum, "quorum", 1, TRUST.maxQuorum);
  const maxInstances = wholeIn(spec.maxInstances ?? Math.min(quorum + 2, TRUST.maxInstances), "maxInstances", quorum, TRUST.maxInstances, " (quorum)");
  const maxErrorInstances = spec.maxErrorInstances === undefined ? undefined : wholeIn(spec.maxErrorInstances, "maxErrorInstances", 1, TRUST.maxInstances);
  const spare = spec.spare === undefined ? 0 : wholeIn(spec.spare, "spare", 0, maxInstances - quorum);
  const deadline = spec.instanceDeadlineMs;
  if (deadline !== undefined) wholeIn(deadline, "instanceDeadlineMs", TRUST.minInstanceDeadlineMs, TRUST.maxInstanceDeadlineMs);
  if (quorum === 1) return undefined;
  return {
    ...rulesOf({ quorum, maxInstances, maxErrorInstances, homogeneous: spec.homogeneous, adaptive: spec.adaptive, distinct: spec.distinct === "donor" ? "donor" : undefined, spare, instanceDeadlineMs: deadline }),
    round: 1,
    started: 0,
    workers: [],
    machines: [],
  };
}

/** Failed instances (on as many workers) after which the job is dead. */
export function maxErrorsOf(rules: JobValidation): number {
  return rules.maxErrorInstances ?? rules.maxInstances;
}

/** Who a worker belongs to, for `distinct: "donor"`: its enrollment's donor label, or (without one) itself alone. */
export function donorKey(worker: Pick<Doc<"workers">, "_id" | "donor">): string {
  return worker.donor !== undefined ? `donor:${worker.donor}` : `worker:${worker._id}`;
}

/**
 * May this worker run the next instance of this job? Never a worker, a machine (with distinct "donor", a donor)
 * that runs or ran one of this round, its failed ones included; with `homogeneous`, only a machine of the first
 * one's os and arch; none once the round holds ROUND_ROWS instances. Reads nothing: a job without validation is
 * always runnable.
 */
export function mayRun(job: Doc<"jobs">, worker: Pick<Doc<"workers">, "_id" | "machineId" | "facts" | "donor">): boolean {
  const rules = job.validation;
  if (!rules) return true;
  if (rules.started >= ROUND_ROWS) return false;
  if (rules.workers.includes(worker._id) || rules.machines.includes(worker.machineId)) return false;
  if (rules.distinct === "donor" && (rules.donors ?? []).includes(donorKey(worker))) return false;
  if (rules.platform && (worker.facts?.os !== rules.platform.os || worker.facts?.arch !== rules.platform.arch)) return false;
  return true;
}

/** The spec an app version keeps as its default: checked, quorum 1 kept as nothing. */
export function defaultSpec(spec: ValidationSpec | undefined): ValidationSpec | undefined {
  const rules = checkValidation(spec);
  return rules ? rulesOf(rules) : undefined;
}

/** The same rules, ready for a new round (a retried dead letter). */
export function newRound(rules: JobValidation): JobValidation {
  return { ...rulesOf(rules), round: rules.round + 1, started: 0, workers: [], machines: [] };
}
