import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LIMITS, TIMING } from "../../convex/core/limits";
import { installReadRecorder, recordReads } from "../../bench/compare/readRecorder";
import { measure } from "./metrics";
import {
  advance,
  dispatchState,
  eventKinds,
  inboxOf,
  jobRow,
  laneCounts,
  laneLinesOf,
  runDue,
  scheduled,
  waiterRow,
} from "./queueState";
import { seedPending } from "./seed";
import { enrollWorker, newFarm, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Workers that asked for work on an empty queue, 5 ms apart: they wait, oldest first. */
async function waitingWorkers(farm: Farm, n: number, options: { capabilities?: string[]; maxConcurrentJobs?: number } = {}) {
  const workers: Enrolled[] = [];
  for (let i = 0; i < n; i++) {
    const w = await enrollWorker(farm, { name: `w${i + 1}`, capabilities: options.capabilities, maxConcurrentJobs: options.maxConcurrentJobs ?? 1 });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities })).toEqual([]);
    workers.push(w);
    vi.advanceTimersByTime(5);
  }
  return workers;
}

const submit = (farm: Farm, spec: { type?: string; priority?: number; requiredCapabilities?: string[] } = {}) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: spec.type ?? "x", ...spec });

describe("waiting", () => {
  test("a claim that finds nothing records the worker as waiting in every lane it can serve, and schedules nothing", async () => {
    const farm = await newFarm();
    await submit(farm, { requiredCapabilities: ["gpu"] }); // a lane it cannot serve
    await farm.t.run(async (ctx) => {
      const job = (await ctx.db.query("jobs").first())!;
      await ctx.db.patch(job._id, { status: "canceled", queue: undefined, finishedAt: Date.now() });
    });
    const w = await enrollWorker(farm, { allowed: ["cpu", "gpu"], capabilities: ["cpu"], types: ["x"], maxConcurrentJobs: 4 });
    await submit(farm, { requiredCapabilities: ["cpu"] });
    const [got] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["cpu", "x"], max: 3 });
    expect(got).toBeDefined();
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 2, since: Date.now(), capabilities: ["cpu", "x"] });
    expect(await laneLinesOf(farm.t, w.workerId)).toEqual(["cpu,x"]);
    expect(await dispatchState(farm)).toMatchObject({ scheduled: false, waiters: true });
    expect(await scheduled(farm.t, "dispatch")).toEqual([]);
  });

  test("a worker that gets all it asked for does not wait", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    await submit(farm);
    await submit(farm);
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 2 })).toHaveLength(2);
    expect(await waiterRow(farm.t, w.workerId)).toBeNull();
    expect(await laneLinesOf(farm.t, w.workerId)).toEqual([]);
  });
});

describe("kicks", () => {
  test("a job submitted while nobody waits does not wake the dispatcher: it only notes that work is there", async () => {
    const farm = await newFarm();
    await submit(farm);
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: true, waiters: false });
    expect(await scheduled(farm.t, "dispatch:run")).toEqual([]);
  });

  test("a job submitted while a worker waits schedules the dispatcher once, however many more follow", async () => {
    const farm = await newFarm();
    await waitingWorkers(farm, 1);
    await submit(farm);
    expect(await dispatchState(farm)).toMatchObject({ scheduled: true });
    await submit(farm);
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "a" }, { type: "b" }] });
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toHaveLength(1);
  });

  test("a worker declaring free slots wakes the dispatcher only when work is there", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 1 });
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: false, waiters: true });
    expect(await scheduled(farm.t, "dispatch:run")).toEqual([]);

    const farm2 = await newFarm();
    await submit(farm2);
    const w2 = await enrollWorker(farm2);
    await farm2.t.mutation(api.workers.ready, { apiKey: w2.apiKey, capabilities: TEST_TYPES, slots: 1 });
    expect(await dispatchState(farm2)).toMatchObject({ scheduled: true });
    expect(await scheduled(farm2.t, "dispatch:run", "pending")).toHaveLength(1);
  });

  test("a stale schedule (old generation) does nothing", async () => {
    const farm = await newFarm();
    await waitingWorkers(farm, 1);
    await submit(farm);
    expect(await farm.t.mutation(internal.dispatch.run, { orgId: farm.orgId, generation: 99 })).toEqual({ stale: true, offered: 0 });
    await runDue(farm.t);
    expect((await dispatchState(farm)).scheduled).toBe(false);
  });
});

describe("the dispatcher", () => {
  test("offers a new job to the oldest waiting worker: job offered, inbox row with its expiry check, counters moved", async () => {
    const farm = await newFarm();
    const [w1, w2] = await waitingWorkers(farm, 3);
    const submittedAt = Date.now();
    const jobId = await submit(farm);
    await runDue(farm.t);
    const expiresAt = (await jobRow(farm.t, jobId)).offerExpiresAt!;
    expect(expiresAt - submittedAt).toBeGreaterThanOrEqual(TIMING.offerTtlMs);
    expect(expiresAt - submittedAt).toBeLessThanOrEqual(TIMING.offerTtlMs + 4 * TIMING.dispatchBatchDelayMs);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "offered", workerId: w1.workerId, attempt: 0 });
    const [offer] = await inboxOf(farm.t, w1.workerId);
    expect(offer).toMatchObject({ kind: "offer", jobId, expiresAt });
    expect(await scheduled(farm.t, "offerExpired", "pending")).toEqual([expect.objectContaining({ _id: offer.expiryCheck, scheduledTime: expiresAt })]);
    // w1 wanted one job: it leaves every waiting line; the others keep their places
    expect(await waiterRow(farm.t, w1.workerId)).toMatchObject({ wants: 0 });
    expect((await waiterRow(farm.t, w1.workerId))!.since).toBeUndefined();
    expect(await laneLinesOf(farm.t, w1.workerId)).toEqual([]);
    expect(await laneLinesOf(farm.t, w2.workerId)).toEqual(["x"]);
    expect(await laneCounts(farm)).toEqual({ x: { pending: 0, running: 1 } });
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: false, waiters: true });
    expect(await farm.t.query(api.workers.doorbell, { apiKey: w1.apiKey })).toEqual({
      offers: [{ jobId, expiresAt }],
      cancel: [],
      resync: false,
    });
    expect(await farm.t.query(api.workers.doorbell, { apiKey: w2.apiKey })).toEqual({ offers: [], cancel: [], resync: false });
  });

  test("takes lane heads in strict order — priority, then FIFO 5 ms apart — and hands them out oldest waiter first", async () => {
    const farm = await newFarm();
    const workers = await waitingWorkers(farm, 5, { capabilities: ["a"] });
    const jobs = [];
    for (const priority of [1, 1, 5, 1, 5]) {
      jobs.push(await submit(farm, { priority, requiredCapabilities: priority === 5 ? ["a"] : [] }));
      vi.setSystemTime(Date.now() + 5); // the clock moves; the dispatcher scheduled by the first submit has not run yet
    }
    await runDue(farm.t);
    const byWorker = [];
    for (const w of workers) byWorker.push((await inboxOf(farm.t, w.workerId))[0]?.jobId);
    expect(byWorker).toEqual([jobs[2], jobs[4], jobs[0], jobs[1], jobs[3]]);
  });

  test("a worker with several free slots gets up to what it wants, and its claim takes them best first", async () => {
    const farm = await newFarm();
    const [w] = await waitingWorkers(farm, 1, { maxConcurrentJobs: 3 });
    expect((await waiterRow(farm.t, w.workerId))!.wants).toBe(1);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 3 });
    expect((await waiterRow(farm.t, w.workerId))!.wants).toBe(3);
    const low = await submit(farm, { priority: 1 });
    const high = await submit(farm, { priority: 9 });
    await submit(farm, { priority: 1 });
    const fourth = await submit(farm);
    await runDue(farm.t);
    expect((await inboxOf(farm.t, w.workerId)).map((r) => r.jobId)).toHaveLength(3);
    expect((await jobRow(farm.t, fourth)).queue).toBe("ready");
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 2 });
    expect(claimed.map((c) => c.jobId)).toEqual([high, low]);
    expect(await inboxOf(farm.t, w.workerId)).toHaveLength(1);
  });

  test("a new lane learns about workers already waiting that can serve it", async () => {
    const farm = await newFarm();
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: await submit(farm) }); // the "" lane exists
    const [gpu] = await waitingWorkers(farm, 1, { capabilities: ["gpu"] });
    const [plain] = await waitingWorkers(farm, 1);
    const jobId = await submit(farm, { requiredCapabilities: ["gpu"] });
    expect(await laneLinesOf(farm.t, gpu.workerId)).toEqual(["gpu,x", "x"]);
    expect(await laneLinesOf(farm.t, plain.workerId)).toEqual(["x"]);
    await runDue(farm.t);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ queue: "offered", workerId: gpu.workerId });
  });

  test("works in bounded batches and reschedules itself while matches remain", async () => {
    const farm = await newFarm();
    const n = LIMITS.dispatchBatch + 3;
    await waitingWorkers(farm, n);
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: n }, () => ({ type: "x" })) });
    vi.advanceTimersByTime(0);
    await farm.t.finishInProgressScheduledFunctions();
    expect(await laneCounts(farm)).toEqual({ x: { pending: 3, running: LIMITS.dispatchBatch } });
    expect(await dispatchState(farm)).toMatchObject({ scheduled: true });
    await runDue(farm.t);
    expect(await laneCounts(farm)).toEqual({ x: { pending: 0, running: n } });
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: false, waiters: false });
  });

  test("with 30,000 pending jobs a dispatch round reads a few dozen documents", async () => {
    const farm = await newFarm();
    await waitingWorkers(farm, 4, { capabilities: ["cpu"] });
    await seedPending(farm, 10_000, { requiredCapabilities: ["cuda"], priority: 50 });
    await seedPending(farm, 20_000, { requiredCapabilities: ["cpu"] });
    expect(await dispatchState(farm)).toMatchObject({ scheduled: true }); // not run yet: time stands still
    const round = await measure(farm.t, "mutation", internal.dispatch.run, { orgId: farm.orgId, generation: 0 });
    expect(round.result.offered).toBe(4);
    expect(round.usage.documentsRead).toBeLessThan(100);
  });
});

describe("claiming offers", () => {
  test("the claim reads only its own offer (no lane head), cancels the expiry check and leaves the counters alone", async () => {
    const farm = await newFarm();
    const [w] = await waitingWorkers(farm, 1);
    const jobId = await submit(farm);
    await runDue(farm.t);
    const others = [await submit(farm), await submit(farm)]; // ready heads it must not read
    const [offer] = await inboxOf(farm.t, w.workerId);
    const counts = await laneCounts(farm);
    installReadRecorder();
    const { result, docs } = await recordReads(() => farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 1 }));
    expect(result.map((c) => c.jobId)).toEqual([jobId]);
    expect(others.filter((id) => docs.has(id))).toEqual([]);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "running", attempt: 1, workerId: w.workerId });
    expect((await jobRow(farm.t, jobId)).offerExpiresAt).toBeUndefined();
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    expect((await scheduled(farm.t, "offerExpired")).map((s) => [s._id, s.state.kind])).toEqual([[offer.expiryCheck, "canceled"]]);
    expect(await laneCounts(farm)).toEqual(counts);
    expect(await eventKinds(farm.t, jobId)).toEqual(["submitted", "claimed"]);
  });

  test("a simple caller's claim takes ready heads at once, even while others wait for the dispatcher", async () => {
    const farm = await newFarm();
    await waitingWorkers(farm, 2);
    const jobId = await submit(farm);
    const eager = await enrollWorker(farm, { name: "eager" });
    const [got] = await farm.t.mutation(api.workers.claim, { apiKey: eager.apiKey, capabilities: TEST_TYPES });
    expect(got.jobId).toBe(jobId);
    await runDue(farm.t);
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: false, waiters: true });
  });

  test("an offer not claimed within the TTL passes to the next waiter; the silent worker stops waiting and is asked to resync", async () => {
    const farm = await newFarm();
    const [dead, alive] = await waitingWorkers(farm, 2);
    const jobId = await submit(farm);
    await runDue(farm.t);
    expect((await jobRow(farm.t, jobId)).workerId).toBe(dead.workerId);
    await advance(farm.t, TIMING.offerTtlMs);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ queue: "offered", workerId: alive.workerId });
    expect(await eventKinds(farm.t, jobId)).toEqual(["submitted", "offer-expired"]);
    expect(await inboxOf(farm.t, dead.workerId)).toEqual([expect.objectContaining({ kind: "resync" })]);
    expect(await farm.t.query(api.workers.doorbell, { apiKey: dead.apiKey })).toEqual({ offers: [], cancel: [], resync: true });
    expect(await laneLinesOf(farm.t, dead.workerId)).toEqual([]);
    expect(await laneCounts(farm)).toEqual({ x: { pending: 0, running: 1 } });
    // the late worker's claim finds nothing of the old offer; its claim puts it back in line and clears the resync
    expect(await farm.t.mutation(api.workers.claim, { apiKey: dead.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    expect(await inboxOf(farm.t, dead.workerId)).toEqual([]);
    expect(await laneLinesOf(farm.t, dead.workerId)).toEqual(["x"]);
  });
});
