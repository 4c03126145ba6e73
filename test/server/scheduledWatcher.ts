// convex-test runs scheduled functions on its own real timers, outside the call queue. This watcher reads
// the `_scheduled_functions` rows created since its last look and arms one timer per due time; when one
// fires it waits for convex-test's in-progress scheduled functions to settle and asks for a refresh, so
// subscriptions see the writes those functions made.
import type { TestConvex } from "convex-test";

const pageSize = 500;

export class ScheduledWatcher {
  private seenUntil = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly t: TestConvex<any>,
    private readonly onSettled: () => void,
  ) {}

  /** Looks for newly scheduled functions. Call inside the call queue after each write. */
  async scan(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const since = this.seenUntil;
      // In pages, so a burst of scheduling stays inside one transaction's read limits.
      const fresh = await this.t.run(async (ctx) =>
        ctx.db.system
          .query("_scheduled_functions")
          .withIndex("by_creation_time", (q) => q.gt("_creationTime", since))
          .take(pageSize),
      );
      for (const job of fresh) {
        this.seenUntil = Math.max(this.seenUntil, job._creationTime);
        if (job.state.kind === "pending") this.arm(job.scheduledTime);
      }
      if (fresh.length < pageSize) return;
    }
  }

  private arm(dueAt: number): void {
    // A few ms after convex-test's own timer for the same due time, which then has already started.
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.settle();
    }, Math.max(0, dueAt - Date.now()) + 5);
    this.timers.add(timer);
  }

  private async settle(): Promise<void> {
    await this.t.finishInProgressScheduledFunctions();
    if (!this.closed) this.onSettled();
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
