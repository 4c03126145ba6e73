// The reference the engine's host CPU per job is measured against, in the same process and the same run: a worker
// reduced to the server calls a job needs — its doorbell subscription, a claim, a completion with the payload as the
// result — and nothing else (no handler process, no events, no timers, no bookkeeping). What the engine spends per
// job beyond this loop is its own.
import type { ClaimedJob, FarmClient } from "../../extension/worker/farmClient";

export class NoopLoop {
  private busy = false;
  private again = false;
  /** The first claim reads the lane heads and, finding nothing, makes the worker wait for offers. */
  private fullDue = true;
  private offers = 0;
  private unsubscribe?: () => void;
  private failure?: Error;

  constructor(
    private readonly farm: Pick<FarmClient, "doorbell" | "claim" | "complete" | "ready">,
    private readonly capabilities: string[],
    private readonly completed: () => void,
  ) {}

  start(): void {
    this.unsubscribe = this.farm.doorbell(
      (bell) => {
        this.offers = bell.offers.length;
        if (bell.resync) this.fullDue = true;
        this.next();
      },
      (error) => (this.failure = error),
    );
    this.next();
  }

  /** Unsubscribes and declares no room (the dispatcher offers it nothing more); throws what a call failed with. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.farm.ready({ capabilities: this.capabilities, slots: 0, stopping: true });
    this.fullDue = true;
    this.offers = 0;
    if (this.failure) throw this.failure;
  }

  private next(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    if (!this.fullDue && this.offers === 0) return;
    this.busy = true;
    this.fullDue = false;
    this.farm
      .claim({ capabilities: this.capabilities, max: 1 })
      .then(async (jobs) => {
        for (const job of jobs) await this.finish(job);
      })
      .catch((error: unknown) => (this.failure = error instanceof Error ? error : new Error(JSON.stringify(error))))
      .finally(() => {
        this.busy = false;
        if (this.again) {
          this.again = false;
          this.next();
        }
      });
  }

  private async finish(job: ClaimedJob): Promise<void> {
    await this.farm.complete({ leaseId: job.leaseId, result: job.payload ?? null, slots: 1 });
    this.completed();
  }
}
