import { Backoff } from "./backoff";
import type { HeartbeatResult } from "./farmClient";

/** `waiting`: the next beat is due when its timer fires; `sending`: one is on its way (never two at once). */
export type HeartbeatState = { kind: "off" } | { kind: "waiting"; timer: ReturnType<typeof setTimeout> } | { kind: "sending" };

export type HeartbeatPorts = {
  everyMs: number;
  send(): Promise<HeartbeatResult>;
  answered(answer: HeartbeatResult): void;
  /** A failed beat; true when it ended the job. */
  failed(e: unknown): boolean;
  /** Beat on after this one (the job was not given up). */
  goOn(): boolean;
};

/** A job's heartbeat: every `everyMs`, sooner again (with backoff) after a failed one, at once when asked. */
export class Heartbeat {
  private state: HeartbeatState = { kind: "off" };
  private readonly backoff = new Backoff(100, 5_000);

  constructor(private readonly ports: HeartbeatPorts) {}

  start(delayMs = this.ports.everyMs): void {
    this.stop();
    this.state = { kind: "waiting", timer: setTimeout(() => void this.beat(), delayMs) };
  }

  stop(): void {
    if (this.state.kind === "waiting") clearTimeout(this.state.timer);
    this.state = { kind: "off" };
  }

  /** Tell the server now (the job froze or thawed), then the usual rhythm again; nothing while one is on its way. */
  now(): void {
    if (this.state.kind !== "waiting") return;
    clearTimeout(this.state.timer);
    void this.beat();
  }

  private async beat(): Promise<void> {
    this.state = { kind: "sending" };
    let next = this.ports.everyMs;
    try {
      const answer = await this.ports.send();
      this.backoff.reset();
      this.ports.answered(answer);
    } catch (e) {
      if (!this.ports.failed(e)) next = Math.min(next, this.backoff.next());
    }
    if (this.state.kind === "sending" && this.ports.goOn()) this.start(next);
    else if (this.state.kind === "sending") this.state = { kind: "off" };
  }
}
