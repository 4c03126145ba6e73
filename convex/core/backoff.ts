/**
 * Exponential backoff with jitter: base·2^retries, capped at `maxMs`, then scaled by a random 50–100 %.
 * The one formula for the queue's retries (transitions.ts) and the engine's own (extension/worker/backoff.ts).
 */
export function jitteredBackoffMs(retries: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retries));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
