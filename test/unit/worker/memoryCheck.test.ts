import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { Worker } from "../../../extension/worker/worker";
import { ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** A queued job (a full claim finds it) that asks for this much free memory. */
function addNeeding(farm: ScriptedFarm, jobId: string, minMemoryMB: number): void {
  farm.queue("demo.echo", jobId, 30_000, { jobId: jobId as ClaimedJob["jobId"], requirements: { minMemoryMB } });
}

describe("Worker taking a job only when the memory it asks for is free", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives the job back at once with no free slot, asks the farm nothing while memory is short, and takes work again once it is free", async () => {
    const farm = new ScriptedFarm();
    let freeMB = 1_000;
    const worker = new Worker({
      client: farm,
      handlers: handlersOf(handler("demo.echo", (p) => Promise.resolve(p))),
      freeMemoryMB: () => freeMB,
      memoryCheckEveryMs: 2_000,
    });
    const short: unknown[] = [];
    worker.on("memoryShort", (e) => short.push(e));
    addNeeding(farm, "big", 2_000);
    await worker.start();
    await tick();
    expect(farm.released).toEqual(["big"]);
    // released saying "no free slot": the farm offers it elsewhere, not back to this engine
    expect(farm.sent("release")).toEqual([[farm.calls.find((c) => c.name === "release")?.args[0], 0]]);
    expect(short).toEqual([{ jobId: "big", type: "demo.echo", neededMB: 2_000, freeMB: 1_000 }]);
    const callsWhileShort = farm.calls.length;
    await tick(10_000);
    expect(farm.calls.length).toBe(callsWhileShort);

    farm.queue("demo.echo", "big", 30_000, { jobId: "big" as ClaimedJob["jobId"] }); // still at the head of its lane
    freeMB = 3_000;
    await tick(2_000);
    await tick();
    await tick();
    expect(farm.completed).toEqual([{ jobId: "big", result: "big" }]);
    // memory free again: one full claim (up to the free slot), as at start
    expect(farm.sent("claim")).toEqual([
      [["demo.echo"], 1],
      [["demo.echo"], 1],
    ]);
    await worker.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("starts a job whose memory is there, and jobs that ask for none, without looking twice", async () => {
    const farm = new ScriptedFarm();
    const freeMemoryMB = vi.fn(() => 8_000);
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("demo.echo", (p) => Promise.resolve(p))), freeMemoryMB, concurrency: 2 });
    addNeeding(farm, "fits", 4_000);
    farm.queue("demo.echo", "plain");
    await worker.start();
    await tick();
    await tick();
    expect(farm.completed.map((c) => c.jobId).sort()).toEqual(["fits", "job1"]);
    expect(freeMemoryMB).toHaveBeenCalledTimes(1);
    await worker.stop();
  });
});
