/**
 * Hysteresis for "other programs are using the CPU": pause only after the load has stayed above the
 * threshold for `pauseAfterMs`, resume only after it has stayed below for `resumeAfterMs`. Without it a
 * donor's machine would flap between donating and paused on every compile.
 */
export type LoadGateOptions = { threshold: number; pauseAfterMs: number; resumeAfterMs: number };

export class LoadGate {
  private busy = false;
  private crossedAt: number | undefined;

  constructor(private options: LoadGateOptions) {}

  configure(options: LoadGateOptions): void {
    this.options = options;
  }

  /** Feed one sample (fraction 0..1 of all cores used by other programs); returns whether the gate is closed. */
  sample(load: number, now: number): boolean {
    const above = load > this.options.threshold;
    if (above === this.busy) {
      this.crossedAt = undefined;
      return this.busy;
    }
    this.crossedAt ??= now;
    const holdFor = this.busy ? this.options.resumeAfterMs : this.options.pauseAfterMs;
    if (now - this.crossedAt >= holdFor) {
      this.busy = above;
      this.crossedAt = undefined;
    }
    return this.busy;
  }

  get closed(): boolean {
    return this.busy;
  }
}
