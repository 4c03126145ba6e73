/**
 * Queue wait (claim time − the time the job became ready) as log-scale histograms, one per minute: a claim
 * inserts its wait as a counter change, the summariser folds them into the minute's bucket counts, and the
 * last hour's percentiles come from at most 60 small rows, never from the jobs.
 */

/** Upper bounds of the buckets, in ms; the last bucket holds everything longer. */
export const WAIT_BUCKETS_MS = [
  10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
  5_000_000, 10_000_000,
] as const;
const BUCKETS = WAIT_BUCKETS_MS.length + 1;

export function waitBucket(waitMs: number): number {
  const i = WAIT_BUCKETS_MS.findIndex((edge) => waitMs < edge);
  return i === -1 ? WAIT_BUCKETS_MS.length : i;
}

/** Add one histogram into another (either may be missing or short: rows from before a bucket was added). */
export function addHistograms(a: readonly number[] | undefined, b: readonly number[] | undefined): number[] {
  return Array.from({ length: BUCKETS }, (_, i) => (a?.[i] ?? 0) + (b?.[i] ?? 0));
}

/**
 * The q-quantile (0–1) of a histogram, as the upper bound of the bucket it falls in (the last bucket, which
 * has none, answers its lower bound). Null without samples.
 */
export function quantileMs(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((s, n) => s + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i];
    if (seen >= rank) return WAIT_BUCKETS_MS[i] ?? WAIT_BUCKETS_MS[WAIT_BUCKETS_MS.length - 1];
  }
  return WAIT_BUCKETS_MS[WAIT_BUCKETS_MS.length - 1];
}

/** p50/p95 over several minute histograms (the summary's `queueWait`), or undefined when nothing was claimed. */
export function waitPercentiles(minutes: ReadonlyArray<readonly number[] | undefined>) {
  const merged = minutes.reduce<number[]>((sum, h) => addHistograms(sum, h), addHistograms(undefined, undefined));
  const samples = merged.reduce((s, n) => s + n, 0);
  if (samples === 0) return undefined;
  return { p50Ms: quantileMs(merged, 0.5)!, p95Ms: quantileMs(merged, 0.95)!, samples };
}
