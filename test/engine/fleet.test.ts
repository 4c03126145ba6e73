import { afterEach, describe, expect, it } from "vitest";
import { engineWorker, eventsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

describe("a fleet of engines", () => {
  let farm: Farm;
  afterEach(async () => {
    await stopFarm(farm);
  });

  it("4 workers × 300 jobs: every job succeeds exactly once, never held by two workers at a time", async () => {
    farm = await startFarm(4, 4);
    const workers = [0, 1, 2, 3].map((i) => engineWorker(farm, i, { concurrency: 3 }));
    const perWorker = new Map<number, number>();
    workers.forEach((w, i) => w.on("jobFinished", (e) => e.outcome === "succeeded" && perWorker.set(i, (perWorker.get(i) ?? 0) + 1)));
    await Promise.all(workers.map((w) => w.start()));
    const ids = await submit(
      farm,
      Array.from({ length: 300 }, (_, i) => ({ type: "demo.echo", payload: { i, text: `job ${i}\n` }, leaseMs: 30_000 })),
    );
    const rows = await waitForJobs(farm, ids, 55_000);
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
    expect(rows.map((r) => (r.result as { i: number }).i)).toEqual(ids.map((_, i) => i));
    expect(rows.every((r) => r.attempt === 1)).toBe(true);

    const events = await eventsOf(farm, ids);
    for (const id of ids) {
      const mine = events.filter((e) => e.jobId === id);
      expect(mine.filter((e) => e.kind === "claimed")).toHaveLength(1);
      expect(mine.filter((e) => e.kind === "done")).toHaveLength(1);
      expect(mine.filter((e) => e.kind === "heartbeat-expired" || e.kind === "released" || e.kind === "retried")).toEqual([]);
    }
    // Streamed output landed with its job.
    const outputs = await farm.server.t.run(async (ctx) =>
      Promise.all(ids.slice(0, 20).map(async (id) => (await ctx.db.query("jobOutput").withIndex("by_job_seq", (q) => q.eq("jobId", id)).collect()).map((c) => c.chunk).join(""))),
    );
    expect(outputs).toEqual(ids.slice(0, 20).map((_, i) => `job ${i}\n`));
    // The server's state can land before the last answers reach the workers.
    const total = () => [...perWorker.values()].reduce((a, b) => a + b, 0);
    for (let i = 0; i < 100 && total() < 300; i++) await sleep(50);
    expect(total()).toBe(300);
    // Work stealing spreads the load: every worker took a share.
    expect(perWorker.size).toBe(4);
  });
});
