import { addHistograms, WAIT_BUCKETS_MS, waitBucket } from "./queueWait";

/**
 * How long a lane's runs that returned a result ran, as a log-scale histogram on the lane's counter row
 * (queueWait.ts buckets), folded in by the summariser from the counter changes the runs' ends insert: no
 * transition reads or writes it. Counts are halved once they pass RUNS_KEPT, so recent runs weigh most.
 */
const RUNS_KEPT = 1_000;
/** Fewer runs than this say nothing about a lane's run time. */
export const MIN_RUNS = 20;

/** The histogram with one more run of `ms`. */
export function addRun(histogram: readonly number[] | undefined, ms: number): number[] {
  const next = addHistograms(histogram, undefined);
  next[waitBucket(Math.max(0, ms))]++;
  return next.reduce((s, n) => s + n, 0) > RUNS_KEPT ? next.map((n) => Math.floor(n / 2)) : next;
}

/**
 * The 95th percentile of the runs, as the upper bound of its bucket; null with fewer than MIN_RUNS runs, or
 * when it falls in the last bucket, which has no upper bound.
 */
export function p95RunMs(histogram: readonly number[] | undefined): number | null {
  const counts = histogram ?? [];
  const total = counts.reduce((s, n) => s + n, 0);
  if (total < MIN_RUNS) return null;
  const rank = Math.ceil(0.95 * total);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i];
    if (seen >= rank) return WAIT_BUCKETS_MS[i] ?? null;
  }
  return null;
}
