import { v, type Infer } from "convex/values";
import { emptyHistogram } from "./histogram";
import { VERDICTS, WATCHDOG_LOOPS, WEBHOOK_OUTCOMES } from "./moves";

/** The shapes of the metrics' total rows (schema: metricCells, metricTypes, metricOrgs). */

/** Counts per bucket (observability/histogram.ts), with the sum of the durations and how many there were. */
export const histogram = v.object({ buckets: v.array(v.number()), sumMs: v.number(), count: v.number() });
export type Histogram = Infer<typeof histogram>;

/** Jobs in each status now. */
export const jobCounts = v.object({
  pending: v.number(),
  running: v.number(),
  waiting: v.number(),
  succeeded: v.number(),
  canceled: v.number(),
  dead: v.number(),
});
export type JobCounts = Infer<typeof jobCounts>;

/** Jobs that ended each way so far (a retried dead letter that ends again counts again). */
export const finishedCounts = v.object({ succeeded: v.number(), dead: v.number(), canceled: v.number() });
export type FinishedCounts = Infer<typeof finishedCounts>;

const countsOf = <K extends string>(keys: readonly K[]) => v.object(Object.fromEntries(keys.map((k) => [k, v.number()])) as Record<K, ReturnType<typeof v.number>>);

/** The org's counters of events that are not a job's status. */
export const orgEvents = {
  retries: v.number(),
  // optional: org rows folded before the result cache existed have none
  cacheHits: v.optional(v.number()),
  leaseExpiries: v.number(),
  offerExpiries: v.number(),
  // settlement optional: org rows folded before settlements were counted have none
  rearms: v.object({ ...countsOf(WATCHDOG_LOOPS.filter((l) => l !== "settlement")).fields, settlement: v.optional(v.number()) }),
  verdicts: countsOf(VERDICTS),
  webhooks: countsOf(WEBHOOK_OUTCOMES),
};

export function emptyJobCounts(): JobCounts {
  return { pending: 0, running: 0, waiting: 0, succeeded: 0, canceled: 0, dead: 0 };
}

export function emptyFinished(): FinishedCounts {
  return { succeeded: 0, dead: 0, canceled: 0 };
}

export function emptyTimes(): Histogram {
  return { buckets: emptyHistogram(), sumMs: 0, count: 0 };
}

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export function emptyOrgEvents() {
  return { retries: 0, cacheHits: 0, leaseExpiries: 0, offerExpiries: 0, rearms: zeros(WATCHDOG_LOOPS), verdicts: zeros(VERDICTS), webhooks: zeros(WEBHOOK_OUTCOMES) };
}
