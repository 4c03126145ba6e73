import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

afterEach(() => vi.useRealTimers());

const DAY = 24 * 3600_000;

async function batchRows(farm: Farm) {
  return await farm.t.run(async (ctx) => await ctx.db.query("batches").collect());
}

async function completeAll(farm: Farm, w: Enrolled, count: number) {
  for (let done = 0; done < count; ) {
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 32 });
    if (claimed.length === 0) break;
    for (const c of claimed) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: {} });
    done += claimed.length;
  }
}

test("retention prunes the counter rows of a batch whose jobs are all gone, and keeps those of a batch with a job left", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 20 }, (_, i) => ({ type: "j1", batchId: "done", payload: i })) });
  await completeAll(farm, w, 20);
  // a batch with one job still pending, and an older row without a shard for a batch whose jobs are gone
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j2", batchId: "alive", runAt: Date.now() + 30 * DAY }] });
  await farm.t.run(async (ctx) => void (await ctx.db.insert("batches", { orgId: farm.orgId, batchId: "legacy", unfinished: 0, succeeded: 4, failed: 0 })));
  expect(new Set((await batchRows(farm)).map((r) => r.batchId))).toEqual(new Set(["done", "alive", "legacy"]));
  expect((await batchRows(farm)).filter((r) => r.batchId === "done").length).toBeGreaterThan(1);

  vi.advanceTimersByTime(8 * DAY);
  await farm.t.mutation(internal.retention.sweep, { olderThanMs: 7 * DAY });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect((await batchRows(farm)).map((r) => r.batchId)).toEqual(["alive"]);
  expect(await checkConsistency(farm.t)).toEqual([]);

  // a job sent to the pruned batch counts it again from nothing; a child may wait on it again
  const [late] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "done" }] });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "done" } });
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child }))!.status).toBe("waiting");
  expect(await checkConsistency(farm.t)).toEqual([]);
  await completeAll(farm, w, 1);
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: late }))!.status).toBe("succeeded");
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child }))!.status).toBe("pending");
});

test("a batch a child still waits on keeps its rows, whatever its jobs", async () => {
  const farm = await newFarm();
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "b" }] });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "b" } });
  // the batch's only job removed under it (no path does this; the rows are the child's only way out)
  await farm.t.run(async (ctx) => {
    const job = (await ctx.db.query("jobs").collect()).find((j) => j.batchId === "b")!;
    await ctx.db.delete(job._id);
  });
  const pass = await farm.t.mutation(internal.retention.sweepBatches, {});
  expect(pass).toMatchObject({ batchesChecked: 1, deletedRows: 0 });
  expect((await batchRows(farm)).length).toBe(1);
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child }))!.status).toBe("waiting");
});

test("a pass is bounded: 100 batch rows at a time, continued in a scheduled pass until none is left", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  // 150 one-job batches whose jobs are gone (their rows as the real path made them)
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 150 }, (_, i) => ({ type: "j1", batchId: `b${i}` })) });
  await farm.t.run(async (ctx) => {
    for (const job of await ctx.db.query("jobs").collect()) await ctx.db.delete(job._id);
  });
  const first = await farm.t.mutation(internal.retention.sweepBatches, {});
  expect(first).toEqual({ batchesChecked: 100, deletedRows: 100, more: true });
  expect(await batchRows(farm)).toHaveLength(50);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect(await batchRows(farm)).toHaveLength(0);
});
