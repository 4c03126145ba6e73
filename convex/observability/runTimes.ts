import { addHistograms, bucketOf, DURATION_BOUNDS_S, isCurrentLayout } from "./histogram";

/**
 * How long a lane's runs that returned a result ran, as a histogram on the lane's counter row (observability/histogram.ts
 * buckets), folded in by the summariser from the counter changes the runs' ends insert: no transition reads or
 * writes it. Counts are halved once they pass RUNS_KEPT, so recent runs weigh most. A row kept with another bucket
 * layout is started afresh.
 */
const RUNS_KEPT = 1_000;
/** Fewer runs than this say nothing about a lane's run time. */
export const MIN_RUNS = 20;

/** The histogram with one more run of `ms`. */
export function addRun(histogram: readonly number[] | undefined, ms: number): number[] {
  const next = addHistograms(isCurrentLayout(histogram) ? histogram : undefined, undefined);
  next[bucketOf(ms)]++;
  return next.reduce((s, n) => s + n, 0) > RUNS_KEPT ? next.map((n) => Math.floor(n / 2)) : next;
}

/**
 * The 95th percentile of the runs, as the upper bound of its bucket (a deadline errs long); null with fewer than
 * MIN_RUNS runs, when it falls in the last bucket, which has no upper bound, or for a row of another layout.
 */
export function p95RunMs(histogram: readonly number[] | undefined): number | null {
  if (!isCurrentLayout(histogram)) return null;
  const total = histogram.reduce((s, n) => s + n, 0);
  if (total < MIN_RUNS) return null;
  const rank = Math.ceil(0.95 * total);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i];
    if (seen >= rank) return i < DURATION_BOUNDS_S.length ? DURATION_BOUNDS_S[i] * 1000 : null;
  }
  return null;
}
