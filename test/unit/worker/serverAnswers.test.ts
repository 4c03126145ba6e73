import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Worker } from "../../../extension/worker/worker";
import { deferred, ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

describe("Worker under the server's slot limit", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("claims again when a job ends, although its claims were answered with fewer jobs than asked", async () => {
    // The server allows this worker one job at a time while the worker has two local slots: a claim answers at
    // most one job while one runs, and no new doorbell value says so.
    const farm = new ScriptedFarm();
    farm.claimAnswer = ({ max }) => Math.min(max ?? 1, 1 - farm.leases.size);
    const gates = [deferred(), deferred(), deferred()];
    let started = 0;
    const slow = handler("slow", async () => {
      await gates[started++].promise;
      return "ok";
    });
    for (let i = 0; i < 3; i++) farm.offer("slow");
    const worker = new Worker({ client: farm, handlers: handlersOf(slow), concurrency: 2 });
    await worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(worker.snapshot().running).toHaveLength(1);

    for (let done = 1; done <= 3; done++) {
      gates[done - 1].resolve();
      await vi.advanceTimersByTimeAsync(0);
      expect(farm.completed).toHaveLength(done);
    }
    expect(farm.queued).toHaveLength(0);
    await worker.stop();
  });
});

describe("Worker when the server refuses a result", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each(["invalid_argument", "too_large"])("fails the job without retry when complete answers %s", async (code) => {
    const { ConvexError } = await import("convex/values");
    const farm = new ScriptedFarm();
    farm.failNext.set("complete", new ConvexError({ code, message: "Result is not storable: nested too deep" }));
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("deep", () => Promise.resolve({ ok: true }))) });
    farm.queue("deep");
    await worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(farm.failed).toHaveLength(1);
    expect(farm.failed[0].retryable).toBe(false);
    expect(farm.failed[0].error).toMatch(/server refused the result/);
    expect(farm.completed).toHaveLength(0);
    await worker.stop();
  });
});
