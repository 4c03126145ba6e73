/**
 * Duration histograms: the buckets every wait and run time is counted in (queue waits per minute for the
 * overview, wait and run times per job type for Prometheus), and quantiles estimated from them the way
 * Prometheus's histogram_quantile does, so the console and a Grafana panel over the same counts agree.
 */

/**
 * Upper bounds of the buckets, in seconds (Prometheus's `le`); one more bucket holds everything longer. From a
 * second on, neighbouring bounds are at most 1.5× apart, so an estimated quantile is off by at most that much
 * and waits that differ by more land in different buckets (p50 and p95 differ when the waits do).
 */
export const DURATION_BOUNDS_S = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 450, 600, 900, 1200, 1800, 2700,
  3600, 5400, 7200, 10800, 14400, 21600, 28800, 43200, 64800, 86400,
] as const;

/** Buckets per histogram: one per bound and the open one past the last. */
export const BUCKETS = DURATION_BOUNDS_S.length + 1;

/** The bucket a duration (ms) falls in: the first whose bound it does not pass (Prometheus buckets are `≤ le`). */
export function bucketOf(ms: number): number {
  const seconds = Math.max(0, ms) / 1000;
  const i = DURATION_BOUNDS_S.findIndex((bound) => seconds <= bound);
  return i === -1 ? DURATION_BOUNDS_S.length : i;
}

export function emptyHistogram(): number[] {
  return new Array<number>(BUCKETS).fill(0);
}

/**
 * Is this a histogram of these buckets? Rows written with an older layout (before the buckets were made finer)
 * have another length: they are left out rather than misread.
 */
export function isCurrentLayout(histogram: readonly number[] | undefined): histogram is readonly number[] {
  return histogram !== undefined && histogram.length === BUCKETS;
}

/** Add one histogram into another; either may be missing (nothing counted yet). */
export function addHistograms(a: readonly number[] | undefined, b: readonly number[] | undefined): number[] {
  return Array.from({ length: BUCKETS }, (_, i) => (a?.[i] ?? 0) + (b?.[i] ?? 0));
}

/** Counts of `a` less those of `b` (what is left of a total after the parts listed apart). */
export function subtractHistograms(a: readonly number[], b: readonly number[]): number[] {
  return Array.from({ length: BUCKETS }, (_, i) => Math.max(0, (a[i] ?? 0) - (b[i] ?? 0)));
}

/**
 * The q-quantile (0–1) of a histogram in ms, or null without samples: the bucket the rank falls in, and inside
 * it a linear guess between its bounds (the first bucket starts at 0; past the last bound the answer is that
 * bound). Prometheus's histogram_quantile, exactly.
 */
export function quantileMs(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((s, n) => s + n, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < histogram.length; i++) {
    const inBucket = histogram[i];
    if (below + inBucket >= rank && inBucket > 0) {
      if (i >= DURATION_BOUNDS_S.length) return DURATION_BOUNDS_S[DURATION_BOUNDS_S.length - 1] * 1000;
      const lower = i === 0 ? 0 : DURATION_BOUNDS_S[i - 1];
      const upper = DURATION_BOUNDS_S[i];
      return Math.round((lower + ((upper - lower) * (rank - below)) / inBucket) * 1000);
    }
    below += inBucket;
  }
  return DURATION_BOUNDS_S[DURATION_BOUNDS_S.length - 1] * 1000;
}
