import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Freezer, Handler } from "../../../extension/worker/handler";
import type { MachineFacts } from "../../../extension/worker/machineFacts";
import { Worker } from "../../../extension/worker/worker";
import { ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** Jobs that run until aborted, recording freeze/thaw per job id. */
function freezable(type: string, log: string[]): Handler {
  return handler(type, (_p, ctx) => {
    const freezer: Freezer = { freeze: () => log.push(`freeze ${ctx.jobId}`), thaw: () => log.push(`thaw ${ctx.jobId}`) };
    ctx.setFreezer?.(freezer);
    return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))));
  });
}

/** Offer a job that asks for a GPU. */
function addGpuJob(farm: ScriptedFarm, type: string): string {
  return farm.offer(type, {}, 30_000, { requirements: { gpu: {} } });
}

describe("GPU jobs while another program uses the GPU", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("freezes only the GPU jobs, thaws them when the GPU is free, and never thaws them under a whole-engine suspension", async () => {
    const farm = new ScriptedFarm();
    const log: string[] = [];
    const worker = new Worker({ client: farm, handlers: handlersOf(freezable("render", log), freezable("cpu", log)), concurrency: 2, graceMs: 1_000 });
    const gpuJob = addGpuJob(farm, "render");
    const cpuJob = farm.offer("cpu");
    await worker.start();
    await tick();
    expect(worker.gpuJobs).toBe(1);

    worker.holdGpuJobs(true);
    expect(log).toEqual([`freeze ${gpuJob}`]);
    expect(worker.state).toBe("running"); // other work goes on
    expect(worker.snapshot().running.find((r) => r.jobId === gpuJob)?.suspendedSince).toBeDefined();

    worker.pause("you are using the computer", { suspend: true });
    worker.resume(); // the owner left again, but the GPU is still taken
    expect(log).toEqual([`freeze ${gpuJob}`, `freeze ${cpuJob}`, `thaw ${cpuJob}`]);

    worker.holdGpuJobs(false);
    expect(log.at(-1)).toBe(`thaw ${gpuJob}`);
    await worker.stop();
  });

  it("gives back a GPU job that starts while the GPU is taken", async () => {
    const farm = new ScriptedFarm();
    const worker = new Worker({ client: farm, handlers: handlersOf(freezable("render", [])), concurrency: 1, graceMs: 1_000 });
    await worker.start();
    worker.holdGpuJobs(true);
    const id = addGpuJob(farm, "render");
    await tick(2_000);
    expect(farm.released).toContain(id);
    await worker.stop();
  });

  it("tells the farm it has no GPU free while GPU jobs are held, and its GPUs again once they are not (so GPU jobs go elsewhere)", async () => {
    const farm = new ScriptedFarm();
    const gpu = { vendor: "nvidia" as const, model: "RTX 4090", vramMB: 24_576 };
    const facts: MachineFacts = { cores: 8, memoryMB: 16_000, os: "linux", arch: "x64", gpus: [gpu] };
    const worker = new Worker({ client: farm, handlers: handlersOf(freezable("render", [])), concurrency: 1, measureFacts: () => Promise.resolve(facts) });
    await worker.start();
    await tick();
    worker.holdGpuJobs(true);
    await tick();
    worker.holdGpuJobs(true); // the same hold again: nothing more said
    await tick();
    worker.holdGpuJobs(false);
    await tick();
    const reported = farm.sent("reportFacts").map(([f]) => (f as MachineFacts).gpus);
    expect(reported).toEqual([[gpu], [], [gpu]]);
    await worker.stop();
  });
});
