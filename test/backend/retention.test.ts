import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, newFarm, overviewNow, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

test("the sweep deletes old finished jobs with output and events in bounded batches, and keeps the rest", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  const ids = await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: Array.from({ length: 30 }, (_, i) => ({ type: `j${i}` })),
  });
  const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 25 });
  for (const c of claimed) {
    await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: c.leaseId, chunk: "out" });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  }
  vi.advanceTimersByTime(2 * 24 * 3600_000);
  // a recent finish that must survive
  const [fresh] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: fresh.leaseId, result: 2 });

  const first = await farm.t.mutation(internal.retention.sweep, { olderThanMs: 24 * 3600_000 });
  expect(first.more).toBe(true);
  expect(first.deletedJobs).toBeLessThan(25);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);

  const left = await farm.t.run(async (ctx) => ({
    jobs: await ctx.db.query("jobs").collect(),
    output: await ctx.db.query("jobOutput").collect(),
    events: await ctx.db.query("jobEvents").collect(),
    buckets: await ctx.db.query("throughput").collect(),
  }));
  const claimedIds = new Set(claimed.map((c) => c.jobId));
  expect(left.jobs.filter((j) => claimedIds.has(j._id))).toEqual([]);
  expect(left.jobs).toHaveLength(ids.length - claimed.length);
  expect(left.jobs.find((j) => j._id === fresh.jobId)!.status).toBe("succeeded");
  expect(left.output).toEqual([]);
  expect(new Set(left.events.map((e) => e.jobId))).toEqual(new Set(left.jobs.map((j) => j._id)));
  expect(left.buckets.every((b) => b.minute * 60_000 > Date.now() - 2 * 3600_000)).toBe(true);
  const overview = await overviewNow(farm.t, w.apiKey);
  expect(overview.counts).toMatchObject({ succeeded: 1, pending: 4 });
});

test("the retention age comes from FARMHAND_RETENTION_MS when not given", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  vi.advanceTimersByTime(10 * 60_000);
  vi.stubEnv("FARMHAND_RETENTION_MS", String(60 * 60_000));
  try {
    expect((await farm.t.mutation(internal.retention.sweep, {})).deletedJobs).toBe(0);
    vi.stubEnv("FARMHAND_RETENTION_MS", String(5 * 60_000));
    expect((await farm.t.mutation(internal.retention.sweep, {})).deletedJobs).toBe(1);
  } finally {
    vi.unstubAllEnvs();
  }
});
