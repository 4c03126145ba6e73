import type { DoorbellValue, FarmClient } from "./farmClient";

/**
 * The engine's subscription and connection. `connecting`: subscribed, never connected yet; `dropped`: was online,
 * the connection is gone (back from `dropped` is a reconnect, where an offer may have passed us by).
 */
export type LinkState = { kind: "closed" } | { kind: "connecting" } | { kind: "online" } | { kind: "dropped" };

export type LinkPorts = {
  rang(v: DoorbellValue): void;
  failed(e: unknown): void;
  connection(connected: boolean): void;
  reconnected(): void;
};

export class FarmLink {
  private state: LinkState = { kind: "closed" };
  private unsubscribe: Array<() => void> = [];

  constructor(
    private readonly client: FarmClient,
    private readonly ports: LinkPorts,
  ) {}

  get current(): Readonly<LinkState> {
    return this.state;
  }

  get open(): boolean {
    return this.state.kind !== "closed";
  }

  get connected(): boolean {
    return this.state.kind === "online";
  }

  subscribe(): void {
    this.close();
    this.state = { kind: "connecting" };
    // A client that cannot tell is taken as connected.
    if (!this.client.onConnectionChange) this.state = { kind: "online" };
    const unconnect = this.client.onConnectionChange?.((connected) => this.connectionChanged(connected));
    const unbell = this.client.doorbell(
      (v) => this.ports.rang(v),
      (e) => this.ports.failed(e),
    );
    this.unsubscribe = [unbell, ...(unconnect ? [unconnect] : [])];
  }

  close(): void {
    this.unsubscribe.splice(0).forEach((u) => u());
    this.state = { kind: "closed" };
  }

  private connectionChanged(connected: boolean): void {
    if (this.state.kind === "closed") return;
    const reconnected = connected && this.state.kind === "dropped";
    if (connected) this.state = { kind: "online" };
    else if (this.state.kind === "online") this.state = { kind: "dropped" };
    this.ports.connection(connected);
    if (reconnected) this.ports.reconnected();
  }
}
