import type { Clock } from "./clock";
import type { FarmCalls, Slots } from "./farmClient";
import type { WorkerState } from "./workerTypes";
import { allowanceUsed, maxBytes } from "./byteAllowance";

/** How long a stopping engine waits for its last "take nothing more" to reach the server. */
export const STOP_DECLARE_WAIT_MS = 2_000;

export type SlotPorts = {
  client: Pick<FarmCalls, "ready">;
  clock: Clock;
  state(): WorkerState;
  concurrency(): number;
  capabilities(): string[];
  /** Jobs running here now (frozen ones included). */
  running(): number;
  /** Waiting for the free memory a job asked for. */
  memoryHeld(): boolean;
  /** What jobs may still download (bytes); undefined: no limit. */
  bytesLeft(): number | undefined;
  failed(e: unknown): void;
};

/**
 * The engine's room as the server counts it: how many jobs it runs at once right now (what complete, fail and
 * release carry too), and the `ready` call that says so. The server waits for offers for what is free.
 */
export class SlotDeclaration {
  constructor(private readonly ports: SlotPorts) {}

  /** 0 unless running; waiting for memory (or with nothing left to download), no free slot until the machine has it. */
  now(): Slots {
    const { ports } = this;
    if (ports.state() !== "running") return 0;
    return ports.memoryHeld() || allowanceUsed(ports.bytesLeft()) ? Math.min(ports.concurrency(), ports.running()) : ports.concurrency();
  }

  /** Say it, with what jobs may still download; a failure goes to the engine (a refused key stops it) and never rejects. */
  declare(stopping = false): Promise<void> {
    const args = { capabilities: this.ports.capabilities(), slots: this.now(), ...maxBytes(this.ports.bytesLeft()), ...(stopping ? { stopping } : {}) };
    return this.ports.client.ready(args).then(
      () => undefined,
      (e: unknown) => this.ports.failed(e),
    );
  }

  /** The last word on the way out ("stopping"), with a bound: a stop must not hang on a connection that is gone. */
  async beforeStop(): Promise<void> {
    let timer: unknown;
    const bound = new Promise<void>((resolve) => (timer = this.ports.clock.setTimeout(resolve, STOP_DECLARE_WAIT_MS)));
    await Promise.race([this.declare(true), bound]);
    this.ports.clock.clearTimeout(timer);
  }
}
