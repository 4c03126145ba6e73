import type { ConvexClient } from "convex/browser";
import { api as seedApi } from "../seedStyle/convex/_generated/api";
import { newClient } from "./engines";

/**
 * A worker of the seed-style design (bench/seedStyle): it watches the one global "is there work" flag, and
 * whenever it says yes it claims until a claim finds nothing, running demo.echo in-process.
 */
export class SeedStyleWorker {
  readonly client: ConvexClient;
  private unwatch: (() => void) | undefined;
  private looping = false;
  private again = false;
  finished = 0;
  onStarted: (jobId: string) => void = () => undefined;
  onFinished: (jobId: string) => void = () => undefined;

  constructor(url: string, private readonly name: string) {
    this.client = newClient(url);
  }

  start(): void {
    this.unwatch = this.client.onUpdate(seedApi.queue.watch, {}, (hasWork) => {
      if (hasWork) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    if (this.looping) {
      this.again = true;
      return;
    }
    this.looping = true;
    try {
      do {
        this.again = false;
        for (;;) {
          const jobId = await this.client.mutation(seedApi.queue.claim, { workerName: this.name, capabilities: ["demo.echo"] });
          if (!jobId) break;
          this.onStarted(jobId);
          await this.client.mutation(seedApi.queue.complete, { jobId });
          this.finished++;
          this.onFinished(jobId);
        }
      } while (this.again);
    } finally {
      this.looping = false;
    }
  }

  async close(): Promise<void> {
    this.unwatch?.();
    await this.client.close();
  }
}
