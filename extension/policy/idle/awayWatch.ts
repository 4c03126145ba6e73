import type { MachineIdle, MachineIdleReading } from "./machineIdle";

/**
 * What the watch concludes from the machine-wide idle time: the owner is away (or the screen locked), or present
 * (input within the threshold, or a fullscreen application holding the screen).
 */
export type AwayState = { away: boolean; reading: MachineIdleReading };

export type AwayWatchOptions = {
  /** Idle this long (milliseconds) counts as away; read on every poll, so a settings change takes effect at once. */
  thresholdMs: () => number;
  /** Called on every change of away/present, and once with undefined when no source answers any more. */
  onChange: (state: AwayState | undefined) => void;
  /** Longest gap between reads while the owner is present. */
  slowPollMs?: number;
};

const DEFAULT_SLOW_POLL_MS = 5_000;

/**
 * Reads the machine's idle time on its own timer, one read at a time. While the owner is away it reads at the
 * source's fast rate, so a key press anywhere is noticed within about a second; while they are present it reads
 * just when the idle time could first reach the threshold (at most every `slowPollMs`). Disposing stops it.
 */
export class AwayWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private state: AwayState | undefined;
  private stopped = false;
  private reading = false;

  constructor(
    private readonly idle: MachineIdle,
    private readonly options: AwayWatchOptions,
  ) {}

  get latest(): AwayState | undefined {
    return this.state;
  }

  start(): void {
    if (this.stopped || this.timer || this.reading) return;
    void this.poll();
  }

  /** Read now (the threshold changed, or the caller wants a fresh answer). */
  poke(): void {
    if (this.stopped || this.reading) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.poll();
  }

  dispose(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    this.reading = true;
    const reading = await this.idle.read();
    this.reading = false;
    if (this.stopped) return;
    if (!reading) {
      this.state = undefined;
      this.stopped = true;
      this.options.onChange(undefined);
      return;
    }
    const threshold = this.options.thresholdMs();
    const away = reading.locked === true || (reading.idleMs >= threshold && reading.fullscreen !== true);
    const before = this.state;
    this.state = { away, reading };
    if (!before || before.away !== away) this.options.onChange(this.state);
    const fast = this.idle.fastPollMs;
    const untilAway = threshold - reading.idleMs;
    const next = away ? fast : Math.max(fast, Math.min(this.options.slowPollMs ?? DEFAULT_SLOW_POLL_MS, untilAway));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, next);
  }
}
