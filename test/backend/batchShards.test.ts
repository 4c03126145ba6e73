import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { BATCH_SHARDS, batchShardOf } from "../../convex/pipelines/dependencies";
import { enrollWorker, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * A batch's counters are sharded (pipelines/dependencies.ts): a job counts in the shard its id hashes to, a completion
 * writes that shard only, and the batch's child is released exactly when the batch's last unfinished job succeeds,
 * whatever the order of completions, retries and cancels, also beside a row from before sharding.
 */

afterEach(() => vi.useRealTimers());

const SIZE = 24;

async function statusOf(farm: Farm, jobId: string) {
  return (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status;
}

async function rowsOf(farm: Farm, batchId: string) {
  return (await farm.t.run(async (ctx) => await ctx.db.query("batches").collect())).filter((r) => r.batchId === batchId);
}

/** A deterministic shuffle (a small LCG), so a failure names an order that can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function claimAll(farm: Farm, w: Enrolled, count: number) {
  const leases = new Map<string, string>();
  while (leases.size < count) {
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: count - leases.size });
    if (claimed.length === 0) throw new Error(`claimed ${leases.size} of ${count}`);
    for (const c of claimed) leases.set(c.jobId, c.leaseId);
  }
  return leases;
}

async function batchWithChild(farm: Farm, batchId: string) {
  const ids = await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: Array.from({ length: SIZE }, (_, i) => ({ type: "j1", batchId, payload: i, maxAttempts: 3 })),
  });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: batchId } });
  return { ids, child };
}

for (const seed of [1, 2, 3]) {
  test(`completions in any order (seed ${seed}) write their own shard and release the child exactly at the last one`, async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
    const { ids, child } = await batchWithChild(farm, "b");
    const rows = await rowsOf(farm, "b");
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.length).toBeLessThanOrEqual(BATCH_SHARDS);
    for (const row of rows) expect(row.unfinished).toBe(ids.filter((id) => batchShardOf(id) === row.shard).length);
    const leases = await claimAll(farm, w, SIZE);
    const order = shuffled(ids, seed);
    for (const [i, jobId] of order.entries()) {
      const before = await rowsOf(farm, "b");
      // one retry on the way, for every third job: a failed attempt leaves the batch's counts as they were
      if (i % 3 === 0) {
        await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: leases.get(jobId)!, error: "flaky", retryable: true });
        expect(await rowsOf(farm, "b")).toEqual(before);
        vi.advanceTimersByTime(2_500); // past its backoff (at most the 2 s base on a first retry)
        await farm.t.finishInProgressScheduledFunctions();
        const again = await claimAll(farm, w, 1);
        expect([...again.keys()]).toEqual([jobId]);
        leases.set(jobId, again.get(jobId)!);
      }
      await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: leases.get(jobId)!, result: { i } });
      // only the completed job's shard changed
      const after = await rowsOf(farm, "b");
      const changed = after.filter((row) => JSON.stringify(row) !== JSON.stringify(before.find((b) => b._id === row._id)));
      expect(changed.map((row) => row.shard)).toEqual([batchShardOf(jobId)]);
      expect(await statusOf(farm, child)).toBe(i === SIZE - 1 ? "pending" : "waiting");
      if (i % 6 === 0) expect(await checkConsistency(farm.t)).toEqual([]);
    }
    const totals = (await rowsOf(farm, "b")).reduce((sum, r) => ({ unfinished: sum.unfinished + r.unfinished, succeeded: sum.succeeded + r.succeeded }), { unfinished: 0, succeeded: 0 });
    expect(totals).toEqual({ unfinished: 0, succeeded: SIZE });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
}

test("a dead letter retried is unfinished again in its shard; a child submitted then waits for it; a cancel cancels the child", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 6 }, (_, i) => ({ type: "j1", batchId: "r", payload: i, maxAttempts: 1 })) });
  const { key: operatorKey } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "op" });
  const leases = await claimAll(farm, w, 5);
  const [dead, ...done] = [...leases.keys()];
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: leases.get(dead)!, error: "fatal", retryable: false });
  expect(await statusOf(farm, dead)).toBe("dead");
  expect(await checkConsistency(farm.t)).toEqual([]);
  await farm.t.mutation(api.consoleActions.retryJob, { apiKey: operatorKey, jobId: dead });
  expect((await rowsOf(farm, "r")).find((r) => r.shard === batchShardOf(dead))!.failed).toBe(0);
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the batch has no failed job now: its child waits
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "r" } });
  expect(await statusOf(farm, child)).toBe("waiting");
  for (const id of done) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: leases.get(id)!, result: {} });
  expect(await statusOf(farm, child)).toBe("waiting");
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the job never claimed is canceled: the child is canceled, naming it
  const never = (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).find((j) => j.batchId === "r" && j.status === "pending" && j._id !== dead)!;
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: never._id });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child })).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: never._id });
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the retried job still runs and is counted when it ends
  const [retried] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["j1"], max: 1 });
  expect(retried.jobId).toBe(dead);
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: retried.leaseId, result: {} });
  const rows = await rowsOf(farm, "r");
  expect(rows.reduce((n, r) => n + r.unfinished, 0)).toBe(0);
  expect(rows.reduce((n, r) => n + r.succeeded, 0)).toBe(5);
  expect(rows.reduce((n, r) => n + r.failed, 0)).toBe(1);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a batch counted in a row from before sharding: its jobs end in their shards, and the child is released at the last", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  const { ids, child } = await batchWithChild(farm, "old");
  // as before sharding: one row without a shard counting the whole batch
  await farm.t.run(async (ctx) => {
    const rows = (await ctx.db.query("batches").collect()).filter((r) => r.batchId === "old");
    for (const row of rows) await ctx.db.delete(row._id);
    await ctx.db.insert("batches", { orgId: farm.orgId, batchId: "old", unfinished: SIZE, succeeded: 0, failed: 0 });
  });
  expect(await checkConsistency(farm.t)).toEqual([]);
  // a job added after the change counts in its shard
  const [late] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "old" }] });
  const all = [...ids, late];
  const leases = await claimAll(farm, w, all.length);
  for (const [i, jobId] of shuffled(all, 7).entries()) {
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: leases.get(jobId)!, result: {} });
    expect(await statusOf(farm, child)).toBe(i === all.length - 1 ? "pending" : "waiting");
  }
  expect(await checkConsistency(farm.t)).toEqual([]);
  expect((await rowsOf(farm, "old")).filter((r) => r.shard === undefined)).toHaveLength(1);
});

test("a child joining a failed batch names its earliest failed job, whatever the shards' order; a failure retried since is not named", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  const ids = await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: Array.from({ length: SIZE }, (_, i) => ({ type: "j1", batchId: "f", payload: i, maxAttempts: 1 })),
  });
  const { key: operatorKey } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "op" });
  const leases = await claimAll(farm, w, SIZE);
  const byShard = [...ids].sort((a, b) => batchShardOf(a) - batchShardOf(b));
  // the earliest failure is in the highest shard, a later one in the lowest: the rows come lowest shard first
  const [low, high] = [byShard[0], byShard[SIZE - 1]];
  expect(batchShardOf(low)).toBeLessThan(batchShardOf(high));
  const failJob = async (jobId: string) => {
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: leases.get(jobId)!, error: "fatal", retryable: false });
    vi.advanceTimersByTime(1_000);
  };
  await failJob(high);
  await failJob(low);
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "f" } });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child })).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: high });
  expect(await checkConsistency(farm.t)).toEqual([]);

  // the earliest is retried and succeeds; a later failure in its own shard is that shard's first now
  await farm.t.mutation(api.consoleActions.retryJob, { apiKey: operatorKey, jobId: high });
  const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["j1"], max: 1 });
  expect(again.jobId).toBe(high);
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: again.leaseId, result: {} });
  const sameShard = ids.find((id) => id !== high && batchShardOf(id) === batchShardOf(high))!;
  expect(sameShard).toBeDefined();
  await failJob(sameShard);
  expect((await rowsOf(farm, "f")).find((r) => r.shard === batchShardOf(high))!.firstFailed).toBe(sameShard);
  const second = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "f" } });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: second })).toMatchObject({ status: "canceled", failedParent: low });
  // both are retried and succeed; a job of a third shard fails after them: it is named, not a first failure that succeeded since
  for (const jobId of [low, sameShard]) await farm.t.mutation(api.consoleActions.retryJob, { apiKey: operatorKey, jobId });
  for (const c of await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["j1"], max: 2 })) {
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: {} });
  }
  vi.advanceTimersByTime(1_000);
  const other = ids.find((id) => ![batchShardOf(low), batchShardOf(high)].includes(batchShardOf(id)))!;
  await failJob(other);
  const third = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "f" } });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: third })).toMatchObject({ status: "canceled", failedParent: other });
  expect(await checkConsistency(farm.t)).toEqual([]);
});
