import { HandlerError } from "../../worker/errors";
import type { ImplContext } from "../protocol";

export const PRIMES_MAX_N = 2_000_000_000;
const SEGMENT = 1 << 20;

/** demo.primes: count the primes below n with a segmented sieve, reporting progress per segment. */
export async function primes(payload: unknown, ctx: ImplContext): Promise<{ n: number; count: number }> {
  const n = (payload as { n?: unknown } | null)?.n;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > PRIMES_MAX_N) {
    throw new HandlerError(`demo.primes needs a payload { n: whole number from 0 to ${PRIMES_MAX_N} }, got ${JSON.stringify(payload)}`, {
      retryable: false,
    });
  }
  const root = Math.floor(Math.sqrt(n));
  const small = basePrimes(root);
  let count = 0;
  const segment = new Uint8Array(SEGMENT);
  for (let low = 2; low < n; low += SEGMENT) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const high = Math.min(low + SEGMENT, n);
    segment.fill(1, 0, high - low);
    for (const p of small) {
      if (p * p >= high) break;
      const start = Math.max(p * p, Math.ceil(low / p) * p);
      for (let m = start; m < high; m += p) segment[m - low] = 0;
    }
    for (let i = 0; i < high - low; i++) count += segment[i];
    ctx.progress((high - 2) / Math.max(1, n - 2), `sieved up to ${high}`);
    // Yield so a cancel message can arrive between segments.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { n, count };
}

function basePrimes(limit: number): number[] {
  const sieve = new Uint8Array(limit + 1).fill(1);
  const out: number[] = [];
  for (let i = 2; i <= limit; i++) {
    if (!sieve[i]) continue;
    out.push(i);
    for (let m = i * i; m <= limit; m += i) sieve[m] = 0;
  }
  return out;
}
