import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { valueBytes } from "../../../convex/contract";
import type { ByteAllowance } from "../../../extension/worker/byteAllowance";
import { Worker } from "../../../extension/worker/worker";
import { ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** An allowance of `limit` bytes that records what the engine spends. */
function allowance(limit: number | undefined): ByteAllowance & { spent: number[] } {
  const spent: number[] = [];
  return {
    spent,
    left: () => (limit === undefined ? undefined : Math.max(0, limit - spent.reduce((a, b) => a + b, 0))),
    spend: (bytes) => void spent.push(bytes),
  };
}

describe("the engine on a metered connection", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("says what its jobs may still download with each claim and each job's end, and counts what each job brought", async () => {
    const farm = new ScriptedFarm();
    const bytes = allowance(10_000);
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("x", () => Promise.resolve("ok"))), concurrency: 1, byteAllowance: bytes });
    const payload = { data: "d".repeat(1_000) };
    farm.queue("x", payload, 30_000, { checkpoint: "QUJD" });
    await worker.start();
    await tick(10);
    expect(bytes.spent).toEqual([valueBytes(payload) + 4]);
    const left = 10_000 - valueBytes(payload) - 4;
    expect(farm.maxBytesSent.filter((s) => s.call !== "ready")).toEqual([
      { call: "claim", maxBytes: 10_000 },
      { call: "complete", maxBytes: left, slots: 1 },
    ]);
    await worker.stop();
  });

  it("with nothing left to download it claims nothing and declares no free slot, until the allowance comes back", async () => {
    const farm = new ScriptedFarm();
    let limit = 0;
    const worker = new Worker({
      client: farm,
      handlers: handlersOf(handler("x", () => Promise.resolve("ok"))),
      concurrency: 2,
      byteAllowance: { left: () => limit, spend: () => undefined },
    });
    farm.queue("x");
    await worker.start();
    await tick(10);
    expect(farm.count("claim")).toBe(0);
    expect(farm.maxBytesSent.filter((s) => (s.slots ?? 0) > 0)).toEqual([]);
    // a new day, or the connection is no longer metered
    limit = 5_000;
    worker.allowanceChanged();
    await tick(10);
    expect(farm.maxBytesSent).toContainEqual({ call: "ready", slots: 2, maxBytes: 5_000 });
    expect(farm.maxBytesSent).toContainEqual({ call: "claim", maxBytes: 5_000 });
    await worker.stop();
  });

  it("without an allowance it never says maxBytes", async () => {
    const farm = new ScriptedFarm();
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("x", () => Promise.resolve("ok"))), concurrency: 1, byteAllowance: allowance(undefined) });
    farm.queue("x");
    await worker.start();
    await tick(10);
    expect(farm.maxBytesSent.length).toBeGreaterThanOrEqual(2);
    expect(farm.maxBytesSent.filter((s) => "maxBytes" in s)).toEqual([]);
    await worker.stop();
  });
});
