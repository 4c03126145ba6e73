/** Small text formatters shared by the tree, the status bar, the panel and the console. No 'vscode' import. */

export function percent(fraction: number | undefined): string {
  return fraction === undefined ? "" : `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)} %`;
}

/** An elapsed time in human units ("850 ms", "42 s", "2.1 min"): humanDuration, for a time that always has a value. */
export function duration(ms: number): string {
  return humanDuration(ms);
}

export function ago(timestamp: number, now = Date.now()): string {
  return `${duration(now - timestamp)} ago`;
}

/** Each unit, how many ms it holds, and from how many of it the next unit reads better. */
const UNITS = [
  ["ms", 1, 1000],
  ["s", 1000, 60],
  ["min", 60_000, 60],
  ["h", 3_600_000, 48],
  ["d", 86_400_000, Number.POSITIVE_INFINITY],
] as const;

/**
 * A duration in the unit people read it in: "850 ms", "4.2 s", "42 s", "42 min", "1.5 h", "3 d" (one decimal below
 * 10 of a unit); "—" for none.
 */
export function humanDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const value = Math.max(0, ms);
  for (const [unit, per, next] of UNITS) {
    const amount = value / per;
    const shown = unit !== "ms" && amount < 10 ? Math.round(amount * 10) / 10 : Math.round(amount);
    if (shown < next) return `${shown} ${unit}`;
  }
  return "—";
}
