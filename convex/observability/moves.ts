import { v, type Infer } from "convex/values";
import type { Doc } from "../_generated/dataModel";

/**
 * What a transition tells the metrics about a job, as a field of the counter change it already inserts
 * (lanes/counters.ts): a job of this type and client key left one status and/or entered another, and how long it
 * waited or ran. A job counts from its submit on (`metered`); a job queued before the metrics existed counts once
 * migrations:meterJobs has counted it, and not before, so no status is ever counted down from nothing.
 */

export const METRIC_STATUSES = ["pending", "running", "waiting", "succeeded", "canceled", "dead"] as const;
export type MetricStatus = (typeof METRIC_STATUSES)[number];

const status = v.union(...METRIC_STATUSES.map((s) => v.literal(s)));

export const jobMove = v.object({
  type: v.string(),
  client: v.optional(v.id("clientKeys")),
  // none: the job is new; `to` none: it was deleted
  from: v.optional(status),
  to: v.optional(status),
  // claimed: ready → started; ended a run: started → now
  waitMs: v.optional(v.number()),
  runMs: v.optional(v.number()),
});
export type JobMove = Infer<typeof jobMove>;

type Metered = Pick<Doc<"jobs">, "type" | "clientKeyId" | "status" | "metered">;

/**
 * The move of a job that is (or was just inserted as) `job`, to `to` (undefined: deleted); none for a job the
 * metrics do not count yet, or that stays where it was. `extra`: its wait or run time.
 */
export function moveOf(job: Metered, to: MetricStatus | undefined, extra: { waitMs?: number; runMs?: number } = {}): JobMove[] {
  if (!job.metered || (job.status === to && extra.waitMs === undefined && extra.runMs === undefined)) return [];
  return [{ type: job.type, ...(job.clientKeyId ? { client: job.clientKeyId } : {}), from: job.status, ...(to ? { to } : {}), ...extra }];
}

/** A job just inserted (metered from its first status on). */
export function arrivalOf(job: Pick<Doc<"jobs">, "type" | "clientKeyId" | "status">): JobMove[] {
  return [{ type: job.type, ...(job.clientKeyId ? { client: job.clientKeyId } : {}), to: job.status }];
}

/** A running job's run so far, when it stops running (ends, goes back, retries). */
export function runMsOf(job: Pick<Doc<"jobs">, "status" | "startedAt">, now: number): { runMs?: number } {
  return job.status === "running" && job.startedAt !== undefined ? { runMs: Math.max(0, now - job.startedAt) } : {};
}

/** Loops the watchdog re-arms (farmhand_watchdog_rearms_total's `loop`); `settlement`: a pipeline parent's pages. */
export const WATCHDOG_LOOPS = ["dispatcher", "summary", "bulk", "webhook", "settlement"] as const;
/** What the judging of a replicated job's results said of them (farmhand_replicated_results_total's `verdict`). */
export const VERDICTS = ["valid", "invalid", "no_quorum"] as const;
/** The results one judgement found valid (they agreed with the quorum) or invalid, counted. */
export function verdictsOf(valid: readonly boolean[]): { valid?: number; invalid?: number } {
  const count = (want: boolean) => valid.filter((v) => v === want).length || undefined;
  return { valid: count(true), invalid: count(false) };
}

/** How a webhook delivery attempt ended (farmhand_webhook_deliveries_total's `outcome`). */
export const WEBHOOK_OUTCOMES = ["delivered", "failed", "abandoned"] as const;

/** Counter changes that are not a job's move, as fields of a counter change row. */
export const eventFields = {
  retries: v.optional(v.number()),
  cacheHits: v.optional(v.number()),
  leaseExpiries: v.optional(v.number()),
  offerExpiries: v.optional(v.number()),
  rearmed: v.optional(v.union(...WATCHDOG_LOOPS.map((l) => v.literal(l)))),
  verdicts: v.optional(v.object({ valid: v.optional(v.number()), invalid: v.optional(v.number()), no_quorum: v.optional(v.number()) })),
  webhook: v.optional(v.union(...WEBHOOK_OUTCOMES.map((o) => v.literal(o)))),
};
