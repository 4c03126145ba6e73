import type { Clock, TimerId } from "./clock";
import type { FarmCalls, ReportedFacts } from "./farmClient";

export type PresenceState = { kind: "off" } | { kind: "on"; timer: TimerId };

export type PresencePorts = {
  client: Pick<FarmCalls, "presence" | "reportFacts">;
  clock: Clock;
  everyMs: number;
  /** Measure this machine; without it no facts are reported. */
  measureFacts?: () => Promise<ReportedFacts>;
  /** The engine is started (facts measured while it stopped are not sent). */
  live(): boolean;
  failed(e: unknown, what: "presence" | "reportFacts"): void;
};

/** Says the engine is still there (a presence call every `everyMs` while on), and what the machine has when that changed. */
export class PresenceReporter {
  private state: PresenceState = { kind: "off" };
  /** The facts the farm last accepted from this engine (JSON), so unchanged facts are not sent again. */
  private reportedFacts: string | undefined;

  constructor(private readonly ports: PresencePorts) {}

  get current(): Readonly<PresenceState> {
    return this.state;
  }

  start(): void {
    this.stop();
    this.state = { kind: "on", timer: this.ports.clock.setTimeout(() => this.tick(), this.ports.everyMs) };
  }

  stop(): void {
    if (this.state.kind === "on") this.ports.clock.clearTimeout(this.state.timer);
    this.state = { kind: "off" };
  }

  /** Measure the machine and tell the farm, unless it already knows these facts. Never throws. */
  async reportFacts(): Promise<void> {
    const measure = this.ports.measureFacts;
    if (!measure) return;
    try {
      const facts = await measure();
      const json = JSON.stringify(facts);
      if (json === this.reportedFacts || !this.ports.live()) return;
      await this.ports.client.reportFacts({ facts });
      this.reportedFacts = json;
    } catch (e) {
      this.ports.failed(e, "reportFacts");
    }
  }

  private tick(): void {
    this.state = { kind: "off" };
    this.ports.client.presence({}).catch((e: unknown) => this.ports.failed(e, "presence"));
    this.start();
  }
}
