// The rules a planted-bug run found no test for (issue 25, issue 26): a worker never holds more jobs than its
// slots, declared slots are capped by its enrollment, the requirement classes' boundaries on both sides, the
// offer TTL and the presence interval against the figures docs/API.md promises.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MachineFacts } from "../../convex/lanes/facts";
import { TIMING } from "../../convex/core/limits";
import type { JobRequirements } from "../../convex/lanes/requirements";
import { advance, inboxOf, jobRow, runDue, waiterRow } from "./queueState";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, newFarm, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** docs/API.md: "an offer not claimed within 5 s (`expiresAt`) passes to the next waiting worker". */
const DOCUMENTED_OFFER_TTL_MS = 5_000;

const NO_GPU: MachineFacts = { cores: 8, memoryMB: 16_384, os: "linux", arch: "x64", gpus: [] };

async function worker(farm: Farm, name: string, facts: MachineFacts, maxConcurrentJobs = 1) {
  const w = await enrollWorker(farm, { name, maxConcurrentJobs });
  await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts });
  return w;
}

const submit = (farm: Farm, requirements?: JobRequirements) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", ...(requirements ? { requirements } : {}) });
const claim = (farm: Farm, apiKey: string, max = 1) => farm.t.mutation(api.workers.claim, { apiKey, capabilities: TEST_TYPES, max });
const claimedIds = async (farm: Farm, apiKey: string, max = 1) => (await claim(farm, apiKey, max)).map((j) => j.jobId);

/** Whether one worker with these facts (and a free slot) is given one job with these requirements. */
async function runsOn(facts: MachineFacts, requirements: JobRequirements): Promise<boolean> {
  const farm = await newFarm();
  const w = await worker(farm, "w", facts, 2);
  const jobId = await submit(farm, requirements);
  const got = await claimedIds(farm, w.apiKey, 2);
  expect(await checkConsistency(farm.t)).toEqual([]);
  if (got.length === 0) {
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");
    expect((await waiterRow(farm.t, w.workerId))?.wants).toBe(2); // it has free slots: it waits for work
  }
  return got.includes(jobId);
}

const withMemory = (memoryMB: number): MachineFacts => ({ ...NO_GPU, memoryMB });
const withGpus = (...gpus: MachineFacts["gpus"]): MachineFacts => ({ ...NO_GPU, gpus });

describe("slots", () => {
  test("workers:claim never gives a worker more jobs than its free slots, however many it asks for", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    const jobs: Id<"jobs">[] = [];
    for (let i = 0; i < 4; i++) jobs.push(await submit(farm));
    const first = await claim(farm, w.apiKey, 2);
    expect(first.map((j) => j.jobId)).toEqual(jobs.slice(0, 2));
    // running its maximum: another claim, even for many, gets nothing
    expect(await claim(farm, w.apiKey, 4)).toEqual([]);
    expect((await jobRow(farm.t, jobs[2])).status).toBe("pending");
    expect(await checkConsistency(farm.t)).toEqual([]);
    // one slot frees: one more, not the two it asks for
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: first[0].leaseId, result: 1 });
    expect(await claimedIds(farm, w.apiKey, 4)).toEqual([jobs[2]]);
    expect((await jobRow(farm.t, jobs[3])).status).toBe("pending");
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("declared slots are capped by the enrollment's maxConcurrentJobs: declaring 32 with an enrollment of 2 is offered 2", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    expect(await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 32 })).toEqual({ waitingFor: 2 });
    for (let i = 0; i < 5; i++) await submit(farm);
    await runDue(farm.t);
    expect((await inboxOf(farm.t, w.workerId)).filter((r) => r.kind === "offer")).toHaveLength(2);
    expect(await claim(farm, w.apiKey, 32)).toHaveLength(2);
    expect(await claim(farm, w.apiKey, 32)).toEqual([]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("requirement classes at their boundaries", () => {
  test("memory: a job asking exactly a class size fits a machine of that size; one MB more asks for the next class", async () => {
    expect(await runsOn(withMemory(16_384), { minMemoryMB: 16_384 })).toBe(true);
    expect(await runsOn(withMemory(16_384), { minMemoryMB: 16_385 })).toBe(false);
    expect(await runsOn(withMemory(32_768), { minMemoryMB: 16_385 })).toBe(true);
  });

  test("memory: a machine counts in a class from 15/16 of its size (what a 16 GB machine reports), not one MB below", async () => {
    expect(await runsOn(withMemory(15_360), { minMemoryMB: 16_000 })).toBe(true);
    expect(await runsOn(withMemory(15_359), { minMemoryMB: 16_000 })).toBe(false);
    // a 12 GB machine is not in the 16 GB class
    expect(await runsOn(withMemory(12_288), { minMemoryMB: 9_000 })).toBe(false);
  });

  test("VRAM: a card counts in a class from 7/8 of its size (a 16 GB card with ECC on reports 15/16 or a little less), not one MB below", async () => {
    const card = (vramMB: number) => withGpus({ vendor: "nvidia", model: "card", vramMB });
    expect(await runsOn(card(16_384), { gpu: { minVramMB: 16_384 } })).toBe(true);
    expect(await runsOn(card(15_360), { gpu: { minVramMB: 16_000 } })).toBe(true); // T4, as nvidia-smi reports it
    expect(await runsOn(card(15_109), { gpu: { minVramMB: 16_000 } })).toBe(true); // T4 with ECC on some drivers
    expect(await runsOn(card(14_336), { gpu: { minVramMB: 16_000 } })).toBe(true);
    expect(await runsOn(card(14_335), { gpu: { minVramMB: 16_000 } })).toBe(false);
    // a 12 GB card is not in the 16 GB class, nor a 16 GB card in the 32 GB one
    expect(await runsOn(card(12_288), { gpu: { minVramMB: 9_000 } })).toBe(false);
    expect(await runsOn(card(16_384), { gpu: { minVramMB: 16_385 } })).toBe(false);
  });

  test("a GPU vendor requirement: not on a machine whose only GPU is another vendor's, with a slot free; on one that also has it", async () => {
    const amd = { vendor: "amd" as const, model: "MI300", vramMB: 196_608 };
    const nvidia = { vendor: "nvidia" as const, model: "RTX 4090", vramMB: 24_564 };
    expect(await runsOn(withGpus(amd), { gpu: { vendor: "nvidia" } })).toBe(false);
    expect(await runsOn(withGpus(amd), { gpu: { vendor: "nvidia", minVramMB: 8_000 } })).toBe(false);
    expect(await runsOn(withGpus(amd, nvidia), { gpu: { vendor: "nvidia", minVramMB: 8_000 } })).toBe(true);
    expect(await runsOn(withGpus(amd), { gpu: { vendor: "amd" } })).toBe(true);
  });
});

describe("timing promised in docs/API.md", () => {
  test("an offer to a silent worker passes to the next waiting worker within 5 s", async () => {
    const farm = await newFarm();
    const silent = await enrollWorker(farm, { name: "silent", maxConcurrentJobs: 1 });
    expect(await claim(farm, silent.apiKey)).toEqual([]);
    vi.advanceTimersByTime(5);
    const alive = await enrollWorker(farm, { name: "alive", maxConcurrentJobs: 1 });
    expect(await claim(farm, alive.apiKey)).toEqual([]);
    const jobId = await submit(farm);
    await runDue(farm.t);
    const offered = await jobRow(farm.t, jobId);
    expect(offered).toMatchObject({ queue: "offered", workerId: silent.workerId });
    const offeredAt = Date.now();
    await advance(farm.t, offered.offerExpiresAt! - offeredAt);
    expect(Date.now() - offeredAt).toBeLessThanOrEqual(DOCUMENTED_OFFER_TTL_MS + 4 * TIMING.dispatchBatchDelayMs);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ queue: "offered", workerId: alive.workerId });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("an offer's expiry is at most 5 s after it was made", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    expect(await claim(farm, w.apiKey)).toEqual([]);
    const jobId = await submit(farm);
    await runDue(farm.t);
    const [offer] = await inboxOf(farm.t, w.workerId);
    expect(offer).toMatchObject({ kind: "offer", jobId });
    // runDue moved the clock past the dispatcher's round: the offer was made within that span
    expect(offer.expiresAt! - Date.now()).toBeLessThanOrEqual(DOCUMENTED_OFFER_TTL_MS);
    expect(offer.expiresAt! - Date.now()).toBeGreaterThan(DOCUMENTED_OFFER_TTL_MS - 4 * TIMING.dispatchBatchDelayMs);
  });

  test("an idle worker that calls presence as often as an engine does is never shown offline", async () => {
    const farm = await newFarm();
    const idle = await enrollWorker(farm, { name: "idle" });
    const watcher = await enrollWorker(farm, { name: "watcher" });
    await farm.t.mutation(api.workers.presence, { apiKey: idle.apiKey });
    for (let call = 0; call < 3; call++) {
      // just before its next presence call, with the summariser's scheduled runs done
      await advance(farm.t, TIMING.presenceEveryMs - 1 - 4 * TIMING.dispatchBatchDelayMs);
      const overview = await farm.t.query(api.farm.overview, { apiKey: watcher.apiKey });
      expect(overview.workers.find((w) => w.name === "idle")).toMatchObject({ online: true });
      expect(overview.onlineWindowMs).toBeGreaterThan(TIMING.presenceEveryMs);
      await farm.t.mutation(api.workers.presence, { apiKey: idle.apiKey });
    }
    // and it does go offline once it stops calling
    await advance(farm.t, TIMING.onlineWindowMs + 1);
    expect((await farm.t.query(api.farm.overview, { apiKey: watcher.apiKey })).workers.find((w) => w.name === "idle")).toMatchObject({ online: false });
  });
});
