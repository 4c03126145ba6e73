import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MachineFacts } from "../../convex/lanes/facts";
import type { JobRequirements } from "../../convex/lanes/requirements";
import { inboxOf, jobRow, laneLinesOf, runDue, waiterRow } from "./queueState";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, expectCode, newFarm, snapshot, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const LAPTOP: MachineFacts = { cores: 8, memoryMB: 15_800, os: "linux", arch: "x64", gpus: [] };
const GPU_BOX: MachineFacts = { cores: 32, memoryMB: 128_000, os: "linux", arch: "x64", gpus: [{ vendor: "nvidia", model: "RTX 4090", vramMB: 24_564 }] };

/** A worker that reported these facts (none: an older worker that reports nothing) and asked for work once. */
async function worker(farm: Farm, name: string, facts: MachineFacts | undefined, maxConcurrentJobs = 1) {
  const w = await enrollWorker(farm, { name, maxConcurrentJobs });
  if (facts) await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts });
  return w;
}

const submit = (farm: Farm, requirements?: JobRequirements, extra: { priority?: number; type?: string } = {}) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: extra.type ?? "x", ...(requirements ? { requirements } : {}), ...extra });

const claim = (farm: Farm, apiKey: string, max = 1) => farm.t.mutation(api.workers.claim, { apiKey, capabilities: TEST_TYPES, max });
const laneKeyOf = async (farm: Farm, jobId: Id<"jobs">) => farm.t.run(async (ctx) => (await ctx.db.get((await ctx.db.get(jobId))!.laneId))!.routingKey);

describe("job requirements", () => {
  test("are kept on the job, shown by jobs:get and handed to the worker that claims it", async () => {
    const farm = await newFarm();
    const w = await worker(farm, "box", GPU_BOX);
    const requirements = { minMemoryMB: 3_000, minCores: 3, gpu: { vendor: "nvidia" as const, minVramMB: 6_000 } };
    const jobId = await submit(farm, requirements);
    expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ requirements });
    expect(await laneKeyOf(farm, jobId)).toBe("x|mem>=4096,cores>=4,gpu:nvidia>=8192");
    const [got] = await claim(farm, w.apiKey);
    expect(got).toMatchObject({ jobId, requirements });
  });

  test("round up into power-of-two classes: close needs share a lane, others get their own", async () => {
    const farm = await newFarm();
    const a = await submit(farm, { minMemoryMB: 3_000 });
    const b = await submit(farm, { minMemoryMB: 4_096 });
    const c = await submit(farm, { minMemoryMB: 4_097 });
    const anyGpu = await submit(farm, { gpu: {} });
    const plain = await submit(farm, {});
    expect(await laneKeyOf(farm, a)).toBe("x|mem>=4096");
    expect(await laneKeyOf(farm, b)).toBe("x|mem>=4096");
    expect(await laneKeyOf(farm, c)).toBe("x|mem>=8192");
    expect(await laneKeyOf(farm, anyGpu)).toBe("x|gpu");
    // an empty requirements object asks for nothing: the plain lane
    expect(await laneKeyOf(farm, plain)).toBe("x");
    expect((await farm.t.run(async (ctx) => await ctx.db.query("lanes").collect())).length).toBe(4);
  });

  test.each<[string, unknown, string]>([
    ["zero memory", { minMemoryMB: 0 }, "requirements.minMemoryMB must be a whole number from 1"],
    ["fractional cores", { minCores: 1.5 }, "requirements.minCores must be a whole number from 1"],
    ["negative VRAM", { gpu: { minVramMB: -8 } }, "requirements.gpu.minVramMB must be a whole number from 1"],
  ])("refuses bad requirements (%s) with invalid_argument, writing nothing", async (_name, requirements, message) => {
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    await expectCode(submit(farm, requirements as JobRequirements), "invalid_argument");
    await expect(submit(farm, requirements as JobRequirements)).rejects.toThrow(message);
    await expect(
      farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "ok" }, { type: "x", requirements: requirements as JobRequirements }] }),
    ).rejects.toThrow(`jobs[1]: ${message}`);
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("HTTP submit takes requirements, and answers bad ones with 400 invalid_argument", async () => {
    const farm = await newFarm();
    const post = (body: unknown) =>
      farm.t.fetch("/api/jobs", { method: "POST", headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const ok = await post({ type: "train", requirements: { gpu: { vendor: "nvidia", minVramMB: 16_000 } } });
    expect(ok.status).toBe(201);
    const { jobId } = (await ok.json()) as { jobId: Id<"jobs"> };
    expect((await jobRow(farm.t, jobId)).requirements).toEqual({ gpu: { vendor: "nvidia", minVramMB: 16_000 } });
    for (const requirements of [{ minMemoryMB: -1 }, { gpu: { vendor: "voodoo" } }, { minCores: "many" }]) {
      const bad = await post({ type: "train", requirements });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_argument");
    }
  });
});

describe("routing by requirements", () => {
  test("a worker without a GPU never gets the GPU job, from the heads or from the dispatcher; a GPU worker does", async () => {
    const farm = await newFarm();
    const laptop = await worker(farm, "laptop", LAPTOP, 2);
    const old = await worker(farm, "old", undefined, 2);
    const gpuJob = await submit(farm, { gpu: { minVramMB: 8_000 } }, { priority: 10 });
    const plainJob = await submit(farm);
    // the GPU job is first in strict order, but the laptop reads only the lanes its machine can serve
    expect((await claim(farm, laptop.apiKey, 2)).map((j) => j.jobId)).toEqual([plainJob]);
    expect(await claim(farm, old.apiKey, 2)).toEqual([]);
    // both now wait, in the plain lane only; the dispatcher offers them nothing
    expect(await laneLinesOf(farm.t, laptop.workerId)).toEqual(["x"]);
    expect(await laneLinesOf(farm.t, old.workerId)).toEqual(["x"]);
    await runDue(farm.t);
    expect(await inboxOf(farm.t, laptop.workerId)).toEqual([]);
    expect(await inboxOf(farm.t, old.workerId)).toEqual([]);
    expect((await jobRow(farm.t, gpuJob)).queue).toBe("ready");
    // a GPU box comes and waits: the dispatcher offers it the GPU job
    const box = await worker(farm, "box", GPU_BOX);
    await farm.t.mutation(api.workers.ready, { apiKey: box.apiKey, capabilities: TEST_TYPES, slots: 1 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, box.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId: gpuJob })]);
    expect((await claim(farm, box.apiKey)).map((j) => j.jobId)).toEqual([gpuJob]);
  });

  test("a waiting worker whose facts change (a GPU appears) is offered the job its machine now meets", async () => {
    const farm = await newFarm();
    const w = await worker(farm, "w", LAPTOP);
    expect(await claim(farm, w.apiKey)).toEqual([]);
    const gpuJob = await submit(farm, { gpu: { vendor: "nvidia" } });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: GPU_BOX });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, w.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId: gpuJob })]);
  });

  test("a worker whose machine no longer meets a job it was offered (its GPU gone) gives the offer back at once, to a machine that does", async () => {
    const farm = await newFarm();
    const w = await worker(farm, "w", GPU_BOX);
    expect(await claim(farm, w.apiKey)).toEqual([]);
    const gpuJob = await submit(farm, { gpu: { vendor: "nvidia" } });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, w.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId: gpuJob })]);
    await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: { ...GPU_BOX, gpus: [] } });
    // not after the offer's 5 s: now
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    const back = await jobRow(farm.t, gpuJob);
    expect(back.queue).toBe("ready");
    expect(back.workerId).toBeUndefined();
    expect(await claim(farm, w.apiKey)).toEqual([]);
    // it still waits for one job it can run, and a GPU box that comes is offered this one
    expect((await waiterRow(farm.t, w.workerId))?.wants).toBe(1);
    const box = await worker(farm, "box", GPU_BOX);
    await farm.t.mutation(api.workers.ready, { apiKey: box.apiKey, capabilities: TEST_TYPES, slots: 1 });
    await runDue(farm.t);
    expect((await claim(farm, box.apiKey)).map((j) => j.jobId)).toEqual([gpuJob]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("memory classes count a machine by its nominal size; a vendor must match", async () => {
    const farm = await newFarm();
    // three slots: what it is not given, it is not given for want of a slot
    const w = await worker(farm, "w", { ...GPU_BOX, memoryMB: 15_800, gpus: [{ vendor: "amd", model: "MI300", vramMB: 196_608 }] }, 3);
    const sixteenGB = await submit(farm, { minMemoryMB: 16_000 }); // class 16384: a "16 GB" machine reporting 15800 MB meets it
    const thirtyTwoGB = await submit(farm, { minMemoryMB: 20_000 }); // class 32768: it does not
    const nvidiaOnly = await submit(farm, { gpu: { vendor: "nvidia" } });
    expect((await claim(farm, w.apiKey, 3)).map((j) => j.jobId)).toEqual([sixteenGB]);
    expect(await claim(farm, w.apiKey, 2)).toEqual([]);
    expect((await waiterRow(farm.t, w.workerId))?.wants).toBe(2); // two slots free, waiting for work it can run
    expect((await jobRow(farm.t, thirtyTwoGB)).status).toBe("pending");
    expect((await jobRow(farm.t, nvidiaOnly)).status).toBe("pending");
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("strict order within a lane: priority, then first come", async () => {
    const farm = await newFarm();
    const box = await worker(farm, "box", GPU_BOX, 4);
    const low = await submit(farm, { minMemoryMB: 5_000 }, { priority: 1 });
    vi.advanceTimersByTime(1);
    const high = await submit(farm, { minMemoryMB: 6_000 }, { priority: 5 });
    vi.advanceTimersByTime(1);
    const lowSecond = await submit(farm, { minMemoryMB: 7_000 }, { priority: 1 });
    const order = (await claim(farm, box.apiKey, 3)).map((j) => j.jobId);
    expect(order).toEqual([high, low, lowSecond]);
  });

  test("a retried dead letter goes back to its requirement lane (a laptop still cannot take it)", async () => {
    const farm = await newFarm();
    const box = await worker(farm, "box", GPU_BOX);
    const laptop = await worker(farm, "laptop", LAPTOP);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", maxAttempts: 1, requirements: { gpu: {} } });
    const [got] = await claim(farm, box.apiKey);
    await farm.t.mutation(api.workers.fail, { apiKey: box.apiKey, leaseId: got.leaseId, error: "boom", retryable: false });
    expect((await jobRow(farm.t, jobId)).status).toBe("dead");
    await farm.t.run(async (ctx) => {
      for (const lane of await ctx.db.query("lanes").collect()) await ctx.db.delete(lane._id); // lane maintenance dropped it
    });
    await farm.t.mutation(internal.admin.retryDead, { jobId });
    expect(await laneKeyOf(farm, jobId)).toBe("x|gpu");
    expect(await claim(farm, laptop.apiKey)).toEqual([]);
    expect((await claim(farm, box.apiKey)).map((j) => j.jobId)).toEqual([jobId]);
  });

  test("farm:overview lists pending jobs no worker of the org could ever run, until one that can reports in", async () => {
    const farm = await newFarm();
    const laptop = await worker(farm, "laptop", LAPTOP);
    await submit(farm, { gpu: { minVramMB: 40_000 } });
    await submit(farm, { gpu: { minVramMB: 40_000 } });
    await submit(farm, { minMemoryMB: 8_000 }); // the laptop meets this one
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, all: true });
    const overview = await farm.t.query(api.farm.overview, { apiKey: laptop.apiKey });
    expect(overview.unmeetable).toEqual([{ routingKey: "x|gpu>=65536", requirements: { gpu: { vramMB: 65_536 } }, pending: 2 }]);
    await worker(farm, "a100", { ...GPU_BOX, gpus: [{ vendor: "nvidia", model: "A100 80GB", vramMB: 81_920 }] });
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, all: true });
    expect((await farm.t.query(api.farm.overview, { apiKey: laptop.apiKey })).unmeetable).toBeUndefined();
  });
});
