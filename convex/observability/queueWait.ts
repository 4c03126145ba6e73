import { addHistograms, emptyHistogram, isCurrentLayout, quantileMs } from "./histogram";

/**
 * Queue wait (claim time − the time the job became ready) as one histogram per minute (observability/histogram.ts
 * buckets): a claim inserts its waits as a counter change, the summariser folds them into the minute's bucket
 * counts, and the last hour's percentiles come from at most 60 small rows, never from the jobs.
 */

/** p50/p95 over several minute histograms (the summary's `queueWait`), or undefined when nothing was claimed. */
export function waitPercentiles(minutes: ReadonlyArray<readonly number[] | undefined>) {
  const merged = minutes.filter(isCurrentLayout).reduce<number[]>((sum, h) => addHistograms(sum, h), emptyHistogram());
  const samples = merged.reduce((s, n) => s + n, 0);
  if (samples === 0) return undefined;
  return { p50Ms: quantileMs(merged, 0.5)!, p95Ms: quantileMs(merged, 0.95)!, samples };
}
