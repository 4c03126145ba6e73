/** Small text formatters shared by the tree, the status bar and the panel. No 'vscode' import. */

export function percent(fraction: number | undefined): string {
  return fraction === undefined ? "" : `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function ago(timestamp: number, now = Date.now()): string {
  return `${duration(now - timestamp)} ago`;
}
