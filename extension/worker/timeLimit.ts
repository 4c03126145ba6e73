/** A job's time limit that stands still while the job is frozen: `running` counts down, `paused` keeps what is left. */
export type TimeLimitState = { kind: "paused"; leftMs: number } | { kind: "running"; leftMs: number; since: number; timer: ReturnType<typeof setTimeout> };

export class TimeLimit {
  private state: TimeLimitState;

  constructor(
    limitMs: number,
    private readonly onExpired: () => void,
  ) {
    this.state = { kind: "paused", leftMs: limitMs };
  }

  run(): void {
    if (this.state.kind === "running") return;
    const leftMs = this.state.leftMs;
    this.state = { kind: "running", leftMs, since: Date.now(), timer: setTimeout(this.onExpired, leftMs) };
  }

  pause(): void {
    if (this.state.kind !== "running") return;
    clearTimeout(this.state.timer);
    this.state = { kind: "paused", leftMs: Math.max(0, this.state.leftMs - (Date.now() - this.state.since)) };
  }
}
