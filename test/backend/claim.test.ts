import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LIMITS } from "../../convex/core/limits";
import { measure } from "./metrics";
import { seedPending } from "./seed";
import { enrollWorker, runningJobs, expectCode, newFarm, snapshot, overviewNow, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

describe("workers:claim", () => {
  test("priority first, then FIFO within a priority", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 10, types: ["low-1", "high-1", "low-2", "high-2", "zero"] });
    const submit = async (name: string, priority: number) => {
      const id = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: name, priority });
      vi.advanceTimersByTime(5);
      return id;
    };
    await submit("low-1", 1);
    await submit("high-1", 5);
    await submit("low-2", 1);
    await submit("high-2", 5);
    await submit("zero", 0);
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
      order.push(c.type);
    }
    expect(order).toEqual(["high-1", "high-2", "low-1", "low-2", "zero"]);
  });

  test("priority order holds across lanes", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["a", "b"], capabilities: ["a", "b"], types: ["t"] });
    const submit = (type: string, priority: number, requiredCapabilities: string[]) =>
      farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type, priority, requiredCapabilities });
    const anywhere = await submit("t", 1, []);
    const needsA = await submit("t", 7, ["a"]);
    const needsAB = await submit("t", 4, ["a", "b"]);
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 3 });
    expect(claimed.map((c) => c.jobId)).toEqual([needsA, needsAB, anywhere]);
    const overview = await overviewNow(farm.t, w.apiKey);
    expect(overview.lanes.map((l) => [l.routingKey, l.running]).sort()).toEqual([["a,b,t", 1], ["a,t", 1], ["t", 1]]);
  });

  test("max claims several at once, best first, and every claim gets its own lease", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 8 });
    for (let p = 1; p <= 6; p++) await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `p${p}`, priority: p });
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 3 });
    expect(claimed.map((c) => c.type)).toEqual(["p6", "p5", "p4"]);
    expect(new Set(claimed.map((c) => c.leaseId)).size).toBe(3);
    for (const c of claimed) {
      expect(c).toMatchObject({ attempt: 1, leaseMs: LIMITS.defaultLeaseMs });
      expect(c.leaseId).toMatch(/^fh_l_/);
    }
  });

  test("strict FIFO within a priority, jobs 5 ms apart included (no random spread)", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 16 });
    const ids = [];
    for (let i = 0; i < 8; i++) {
      ids.push(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `j${i}` }));
      vi.advanceTimersByTime(5);
    }
    // a batch lands in one millisecond: its order is the order it was given
    ids.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "b0" }, { type: "b1" }, { type: "b2" }] })));
    const order: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
      order.push(c.jobId);
    }
    expect(order).toEqual(ids);
  });

  test("a claim of several takes the best jobs in order across lanes, 5 ms apart", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["a"], capabilities: ["a"], maxConcurrentJobs: 10 });
    const ids = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `j${i}`, requiredCapabilities: i % 2 ? ["a"] : [] }));
      vi.advanceTimersByTime(5);
    }
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 4 });
    expect(claimed.map((c) => c.jobId)).toEqual(ids.slice(0, 4));
  });

  test("is bounded by the worker's free slots", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    for (let i = 0; i < 5; i++) await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 5 })).toHaveLength(2);
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 5 })).toEqual([]);
    const [mine] = await runningJobs(farm.t, w.apiKey);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: mine.leaseId, result: null });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 5 })).toHaveLength(1);
  });

  test.each([0, -1, LIMITS.claimMax + 1, 1.5])("refuses max = %s and changes nothing", async (max) => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("refuses advertised capabilities outside [a-z0-9:._-]", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await expectCode(farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["Ollama"] }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: ["a/b"], slots: 1 }), "invalid_argument");
  });

  test("an empty queue claims nothing", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
  });

  test("a claim takes only jobs the worker could run with what it advertises now", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["gpu"], capabilities: [] });
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["gpu"] });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    expect((await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["gpu", "x"] })).map((c) => c.jobId)).toEqual([jobId]);
  });

  test("records a claimed event, lastSeenAt at most once a minute (in presence, never on the worker's own row)", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x" }, { type: "x" }, { type: "x" }] });
    const workerRow = async () => await farm.t.run(async (ctx) => await ctx.db.get(w.workerId));
    const before = await workerRow();
    const seen = async () =>
      (await farm.t.run(async (ctx) => await ctx.db.query("presence").withIndex("by_worker", (q) => q.eq("workerId", w.workerId)).unique()))!
        .lastSeenAt;
    const enrolledAt = await seen();
    vi.advanceTimersByTime(30_000);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(await seen()).toBe(enrolledAt);
    vi.advanceTimersByTime(31_000);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(await seen()).toBe(Date.now());
    const kinds = await farm.t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).map((e) => e.kind));
    expect(kinds.filter((k) => k === "claimed")).toHaveLength(2);
    expect(await workerRow()).toEqual(before);
  });
});

describe("deep queues", () => {
  test("across 20 lanes of 100 ready jobs, a claim of 4 reads about one job per lane more than it takes, and takes the 4 best in strict order", async () => {
    const farm = await newFarm();
    const lanes = Array.from({ length: 20 }, (_, i) => `cap${i}`);
    const w = await enrollWorker(farm, { allowed: lanes, capabilities: lanes, maxConcurrentJobs: 8 });
    for (const [i, cap] of lanes.entries()) await seedPending(farm, 100, { requiredCapabilities: [cap], priority: i % 3, startAt: Date.now() - 3_600_000 + (i % 7) });
    const best = await farm.t.run(async (ctx) => {
      const all = await ctx.db.query("jobs").collect();
      return all.sort((a, b) => a.negPriority - b.negPriority || a.availableAt - b.availableAt || a._creationTime - b._creationTime).slice(0, 4).map((j) => j._id);
    });
    const claim = await measure(farm.t, "mutation", api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 4 });
    expect(claim.result.map((c) => c.jobId)).toEqual(best);
    // the 20 lane heads, the taken jobs' successors, the lanes and the worker's own rows: never 20 × 4 jobs
    expect(claim.usage.documentsRead).toBeLessThan(20 + 4 + 40);
  });

  // stock convex-test walks all 80,000 stored documents for every index read, and the fair order adds a few (the skip
  // from flow to flow, the taken flow's next job): the reads counted below stay a few dozen, the wall time does not
  test("with 30,000 pending jobs and 10,000 blocked ones ahead, a claim reads a few dozen documents", { timeout: 120_000 }, async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["cpu"], capabilities: ["cpu"] });
    await seedPending(farm, 10_000, { requiredCapabilities: ["cuda"], priority: 50, startAt: Date.now() - 3_600_000 });
    await seedPending(farm, 30_000, { requiredCapabilities: ["cpu"] });
    const summariser = await measure(farm.t, "mutation", internal.summary.refresh, { orgId: farm.orgId });
    expect(summariser.usage.documentsRead).toBeLessThan(200);
    const overview = await measure(farm.t, "query", api.farm.overview, { apiKey: w.apiKey });
    expect(overview.result.counts.pending).toBe(40_000);
    expect(overview.usage.documentsRead).toBeLessThan(200);
    const claim = await measure(farm.t, "mutation", api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 4 });
    expect(claim.result).toHaveLength(4);
    expect(claim.usage.documentsRead).toBeLessThan(100);
    // 4 jobs + 4 claimed events + 1 counter change + 1 queue-wait change + the worker's running count + a summary kick + presence
    expect(claim.usage.documentsWritten).toBeLessThanOrEqual(4 + 4 + 4);
    const after = await overviewNow(farm.t, w.apiKey);
    expect(after.counts).toMatchObject({ pending: 39_996, running: 4 });
    // the transaction limits are live: reading the whole queue in one transaction is refused
    await expect(farm.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).length)).rejects.toThrow(/too many documents/);
  });
});
