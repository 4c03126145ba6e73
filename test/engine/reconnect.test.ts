import { afterEach, describe, expect, it } from "vitest";
import { engineWorker, eventsOf, sleep, startFarm, stopFarm, submit, waitForJobs, jobsOf, type Farm } from "./helpers";

describe("the server drops every connection for 5 s mid-run", () => {
  let farm: Farm;
  afterEach(async () => {
    await stopFarm(farm);
  });

  it("workers reconnect on their own and every job finishes", async () => {
    farm = await startFarm(2, 2);
    const workers = [0, 1].map((i) => engineWorker(farm, i, { concurrency: 2 }));
    const seen: boolean[] = [];
    workers[0].on("connection", (e) => seen.push(e.connected));
    await Promise.all(workers.map((w) => w.start()));
    const ids = await submit(
      farm,
      Array.from({ length: 40 }, (_, i) => ({ type: "demo.echo", payload: { i, delayMs: 150, text: `line ${i}\n` }, leaseMs: 20_000 })),
    );
    // Wait until the run is under way, then cut everyone off.
    for (;;) {
      const rows = await jobsOf(farm, ids);
      if (rows.filter((r) => r.status === "succeeded").length >= 5) break;
      await sleep(50);
    }
    const before = (await jobsOf(farm, ids)).filter((r) => r.status === "succeeded").length;
    await farm.server.dropConnections(5_000);
    expect(before).toBeLessThan(40);

    const rows = await waitForJobs(farm, ids, 45_000);
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
    expect(seen).toContain(false);
    expect(seen.at(-1)).toBe(true);
    // Leases outlived the outage, so nothing was retried: each job was claimed and done exactly once.
    const events = await eventsOf(farm, ids);
    for (const id of ids) {
      expect(events.filter((e) => e.jobId === id && e.kind === "done")).toHaveLength(1);
    }
    expect(workers.every((w) => w.state === "running")).toBe(true);
  });
});
