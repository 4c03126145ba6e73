import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MachineFacts } from "../../../extension/worker/machineFacts";
import { Worker } from "../../../extension/worker/worker";
import { ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);
const FACTS: MachineFacts = { cores: 8, memoryMB: 16_000, os: "linux", arch: "x64", gpus: [] };

describe("Worker reporting its machine's facts", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reports them at start, not again while they stay the same, and again when they changed", async () => {
    const farm = new ScriptedFarm();
    let facts = FACTS;
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("demo.echo", (p) => Promise.resolve(p))), measureFacts: () => Promise.resolve(facts) });
    await worker.start();
    await tick();
    expect(farm.calls.filter((c) => c.name === "reportFacts").map((c) => c.args)).toEqual([[FACTS]]);
    await worker.refreshCapabilities();
    await tick();
    expect(farm.count("reportFacts")).toBe(1);
    facts = { ...FACTS, gpus: [{ vendor: "nvidia", model: "Tesla T4", vramMB: 15_360 }] };
    await worker.refreshCapabilities();
    await tick();
    expect(farm.calls.filter((c) => c.name === "reportFacts").map((c) => c.args)).toEqual([[FACTS], [facts]]);
    await worker.stop();
  });

  it("a refused report is an error to show, not a reason to stop; it is tried again on the next refresh", async () => {
    const farm = new ScriptedFarm();
    farm.failNext.set("reportFacts", new Error("network down"));
    const worker = new Worker({ client: farm, handlers: handlersOf(handler("demo.echo", (p) => Promise.resolve(p))), measureFacts: () => Promise.resolve(FACTS) });
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    await worker.start();
    await tick();
    expect(errors).toEqual(["reportFacts failed: network down"]);
    expect(worker.state).toBe("running");
    await worker.refreshCapabilities();
    await tick();
    expect(farm.count("reportFacts")).toBe(2);
    await worker.stop();
  });
});
