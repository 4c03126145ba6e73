import { jitteredBackoffMs } from "../../convex/contract";

/** Jittered exponential backoff ("full jitter"): delay is random in [base*2^n / 2, base*2^n], capped. */
export class Backoff {
  private failures = 0;
  constructor(
    private readonly baseMs = 250,
    private readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** Record a failure and return how long to wait before the next try. */
  next(): number {
    return jitteredBackoffMs(this.failures++, this.baseMs, this.maxMs, this.random);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}
