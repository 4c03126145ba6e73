// Workers on a metered connection declare what their jobs may still download (`maxBytes`): the dispatcher offers
// them, and a claim hands them, only jobs whose payload (plus an app job's module) fits; the rest go to others.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm } from "./appFarm";
import { inboxOf, jobRow, runDue, waiterRow } from "./queueState";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, expectCode, LAPTOP_FACTS, newFarm, snapshot, type Enrolled, type Farm } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A job whose payload is about `bytes` long (a string of that many characters, plus the JSON around it). */
const submitSized = (farm: Farm, bytes: number, priority = 0) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: { data: "d".repeat(bytes) }, priority });

const payloadBytes = async (farm: Farm, jobId: Id<"jobs">) => (await jobRow(farm.t, jobId)).payloadBytes!;

/** A worker that declared itself waiting with `slots`, on a metered connection when `maxBytes` is given. */
async function waiting(farm: Farm, name: string, slots: number, maxBytes?: number): Promise<Enrolled> {
  const w = await enrollWorker(farm, { name, maxConcurrentJobs: slots, types: ["x"] });
  await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots, ...(maxBytes === undefined ? {} : { maxBytes }) });
  vi.advanceTimersByTime(5);
  return w;
}

const offeredTo = async (farm: Farm, w: Enrolled) => (await inboxOf(farm.t, w.workerId)).filter((r) => r.kind === "offer").map((r) => r.jobId);

describe("the dispatcher and a metered worker", () => {
  test("a job too big for the oldest waiter's allowance goes to the next waiter; a small one to the metered worker, counted down", async () => {
    const farm = await newFarm();
    const metered = await waiting(farm, "phone-hotspot", 2, 2_000);
    const wired = await waiting(farm, "office", 1);
    const big = await submitSized(farm, 5_000);
    await runDue(farm.t);
    expect(await offeredTo(farm, metered)).toEqual([]);
    expect(await offeredTo(farm, wired)).toEqual([big]);

    const small = await submitSized(farm, 500);
    await runDue(farm.t);
    expect(await offeredTo(farm, metered)).toEqual([small]);
    expect((await waiterRow(farm.t, metered.workerId))?.bytesLeft).toBe(2_000 - (await payloadBytes(farm, small)));
    // what is left no longer fits a second job of that size plus more: it stays ready for someone else
    const second = await submitSized(farm, 1_600);
    await runDue(farm.t);
    expect(await offeredTo(farm, metered)).toEqual([small]);
    expect((await jobRow(farm.t, second)).queue).toBe("ready");
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("an app job counts its module's size: a worker whose allowance holds the payload but not the module is not offered it", async () => {
    const farm = await publishingFarm();
    const module = buildModule({ imports: [FD_WRITE] });
    expect((await publish(farm, "render", module, { query: "memoryMB=64&timeoutMs=5000" })).status).toBe(200);
    const donor = async (name: string, maxBytes: number) => {
      const w = await enrollWorker(farm, { name, allowed: ["apps"], capabilities: ["apps"], types: [], maxConcurrentJobs: 1, facts: LAPTOP_FACTS });
      await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 1, maxBytes });
      vi.advanceTimersByTime(5);
      return w;
    };
    // submitted first (the dispatcher runs only below), so its payload's size is known when the donors declare
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", payload: { tile: 1 } });
    const payload = await payloadBytes(farm, jobId);
    const tight = await donor("tight", payload + module.length - 1); // the payload fits, the module does not
    const roomy = await donor("roomy", payload + module.length + 7);
    await runDue(farm.t);
    expect(await offeredTo(farm, tight)).toEqual([]);
    expect(await offeredTo(farm, roomy)).toEqual([jobId]);
    expect((await waiterRow(farm.t, roomy.workerId))?.bytesLeft).toBe(7);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("a metered worker's claims", () => {
  test("a full claim takes the heads that fit what it may download, all together, and waits with what is left", async () => {
    const farm = await newFarm();
    const big = await submitSized(farm, 5_000, 10); // the best job, but too big
    vi.advanceTimersByTime(1);
    const smalls = [await submitSized(farm, 900), await submitSized(farm, 900), await submitSized(farm, 900)];
    const w = await enrollWorker(farm, { maxConcurrentJobs: 4, types: ["x"] });
    const size = await payloadBytes(farm, smalls[0]);
    const got = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 4, maxBytes: 2 * size + 10 });
    expect(got.map((j) => j.jobId)).toEqual(smalls.slice(0, 2));
    expect((await jobRow(farm.t, big)).queue).toBe("ready");
    expect((await jobRow(farm.t, smalls[2])).queue).toBe("ready");
    // it still wants two jobs, and what is left (10 bytes) is known, so nothing is offered to it
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 2, bytesLeft: 10 });
    await runDue(farm.t);
    expect(await offeredTo(farm, w)).toEqual([]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("an offer it may no longer download (it spent its allowance since) goes back to the queue, and its slot is wanted again", async () => {
    const farm = await newFarm();
    const w = await waiting(farm, "hotspot", 1, 10_000);
    const jobId = await submitSized(farm, 3_000);
    await runDue(farm.t);
    expect(await offeredTo(farm, w)).toEqual([jobId]);
    const got = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1, maxBytes: 1_000 });
    expect(got).toEqual([]);
    expect(await offeredTo(farm, w)).toEqual([]);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready" });
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 1, bytesLeft: 1_000 });
    await runDue(farm.t);
    expect(await offeredTo(farm, w)).toEqual([]); // still too big for it
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("declaring a smaller allowance gives back the offers beyond it; declaring none lifts the limit", async () => {
    const farm = await newFarm();
    const w = await waiting(farm, "hotspot", 2, 100_000);
    const first = await submitSized(farm, 2_000, 5);
    const second = await submitSized(farm, 2_000);
    await runDue(farm.t);
    expect(await offeredTo(farm, w)).toEqual([first, second]);
    const size = await payloadBytes(farm, first);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 2, maxBytes: size + 5 });
    expect(await offeredTo(farm, w)).toEqual([first]);
    expect((await jobRow(farm.t, second)).queue).toBe("ready");
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 1, bytesLeft: 5 });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 2 });
    expect((await waiterRow(farm.t, w.workerId))?.bytesLeft).toBeUndefined();
    await runDue(farm.t);
    expect(await offeredTo(farm, w)).toEqual([first, second]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("a job's last write declares what is left with the free slot", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 1, types: ["x"] });
    await submitSized(farm, 100);
    const [job] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1, maxBytes: 50_000 });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: null, slots: 1, maxBytes: 12_345 });
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 1, bytesLeft: 12_345 });
  });

  test.each([
    ["negative", -1],
    ["fractional", 10.5],
    ["not a number", Number.NaN],
    ["infinite", Number.POSITIVE_INFINITY],
  ])("maxBytes %s is refused (invalid_argument) and nothing changes", async (_name, maxBytes) => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2, types: ["x"] });
    await submitSized(farm, 100);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1, maxBytes }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 1, maxBytes }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
    expect(await waiterRow(farm.t, w.workerId)).toBeNull();
  });
});
