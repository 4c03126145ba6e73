import type { ConvexClient } from "convex/browser";
import type { FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import { newClient } from "./engines";

/**
 * Idle donors at the protocol level, thousands in one process: each says it has one free slot (workers:ready) and
 * holds its one doorbell subscription, as an engine does; an offer is claimed and completed at once (its payload as
 * the result), declaring the slot free again. Donors share a few connections (a thousand subscriptions each).
 */

type Doorbell = FunctionReturnType<typeof api.workers.doorbell>;
const CAPABILITIES = ["demo.echo"];
const PER_CONNECTION = 1_000;

class Donor {
  private busy = false;
  unsubscribe: (() => void) | undefined;

  constructor(
    private readonly client: ConvexClient,
    readonly apiKey: string,
    private readonly finished: (jobId: string) => void,
  ) {}

  async declare(): Promise<void> {
    await this.client.mutation(api.workers.ready, { apiKey: this.apiKey, capabilities: CAPABILITIES, slots: 1 });
  }

  listen(): void {
    this.unsubscribe = this.client.onUpdate(api.workers.doorbell, { apiKey: this.apiKey }, (bell) => void this.ring(bell));
  }

  private async ring(bell: Doorbell): Promise<void> {
    if (this.busy) return;
    if (bell.resync) return void (await this.declare());
    if (bell.offers.length === 0) return;
    this.busy = true;
    try {
      const leased = await this.client.mutation(api.workers.claim, { apiKey: this.apiKey, capabilities: CAPABILITIES, max: bell.offers.length });
      for (const job of leased) {
        await this.client.mutation(api.workers.complete, { apiKey: this.apiKey, leaseId: job.leaseId, result: job.payload ?? null, slots: 1 });
        this.finished(job.jobId);
      }
    } finally {
      this.busy = false;
    }
  }
}

export class ProtocolDonors {
  private readonly clients: ConvexClient[] = [];
  private readonly donors: Donor[] = [];
  readonly finished = new Set<string>();

  constructor(url: string, apiKeys: string[]) {
    for (let i = 0; i < apiKeys.length; i += PER_CONNECTION) this.clients.push(newClient(url));
    apiKeys.forEach((key, i) => this.donors.push(new Donor(this.clients[Math.floor(i / PER_CONNECTION)], key, (id) => this.finished.add(id))));
  }

  /** Every donor waits for an offer (oldest first, in key order) and listens at its doorbell. */
  async start(): Promise<void> {
    for (let i = 0; i < this.donors.length; i += 50) await Promise.all(this.donors.slice(i, i + 50).map((d) => d.declare()));
    for (const donor of this.donors) donor.listen();
  }

  async close(): Promise<void> {
    for (const donor of this.donors) donor.unsubscribe?.();
    await Promise.all(this.clients.map((c) => c.close()));
  }
}
