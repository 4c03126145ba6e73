import { expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { WORKER_ROWS_PER_CALL } from "../../convex/queue/workerRows";
import { measure } from "./metrics";
import { checkConsistency } from "./sweep/consistency";
import { donor, instanceLease, submitReplicated, useReplicationClock, type Donor } from "./validationDonors";
import { newFarm, TEST_TYPES, type Farm } from "./setup";

/**
 * Retention and purge leave nothing behind: a purged replicated job's instances and its kept results (up to 256 KiB
 * each) go with it, and a deleted worker's trust streaks, quota days and credit weeks go with it; the queue is
 * consistent afterwards.
 */

useReplicationClock();

const DAY = 24 * 60 * 60_000;

async function complete(farm: Farm, worker: Donor, jobId: Id<"jobs">, result: unknown) {
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: await instanceLease(farm, worker, jobId), result });
}

async function rowsOf(farm: Farm) {
  return await farm.t.run(async (ctx) => ({
    jobs: await ctx.db.query("jobs").collect(),
    instances: await ctx.db.query("jobInstances").collect(),
    results: await ctx.db.query("instanceResults").collect(),
    weeks: await ctx.db.query("creditWeeks").collect(),
    streaks: await ctx.db.query("trustStreaks").collect(),
    quotaUse: await ctx.db.query("quotaUse").collect(),
    workers: await ctx.db.query("workers").collect(),
  }));
}

test("a retention sweep deletes replicated jobs' instances and a revoked worker's streaks and quota days; the queue stays consistent", async () => {
  const farm = await newFarm();
  const [a, b, liar] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "liar")];
  const agreed = await submitReplicated(farm, { quorum: 2 });
  await complete(farm, a, agreed, { n: 1 });
  await complete(farm, b, agreed, { n: 1 });
  const disputed = await submitReplicated(farm, { quorum: 2, maxInstances: 3 });
  await complete(farm, liar, disputed, { n: 666 });
  await complete(farm, a, disputed, { n: 1 });
  await complete(farm, b, disputed, { n: 1 });
  // the liar's quota is reduced now: its next claim is counted on a quota day
  const plain = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: liar.apiKey, capabilities: TEST_TYPES });
  expect(lease.jobId).toBe(plain);
  await farm.t.mutation(api.workers.complete, { apiKey: liar.apiKey, leaseId: lease.leaseId, result: 1 });
  const before = await rowsOf(farm);
  expect(before.instances.length).toBe(5);
  expect(before.results.length).toBeGreaterThan(0);
  expect(before.weeks.some((w) => w.workerId === liar.workerId)).toBe(true);
  expect(before.streaks.some((s) => s.workerId === liar.workerId && s.invalid === 1)).toBe(true);
  expect(before.quotaUse.map((q) => q.workerId)).toEqual([liar.workerId]);
  expect(await checkConsistency(farm.t)).toEqual([]);

  await farm.t.mutation(internal.admin.revokeWorker, { workerId: liar.workerId });
  vi.advanceTimersByTime(2 * DAY);
  await farm.t.mutation(internal.retention.sweep, { olderThanMs: DAY });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: DAY });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);

  const after = await rowsOf(farm);
  expect(after.jobs).toEqual([]);
  expect(after.instances).toEqual([]);
  expect(after.results).toEqual([]);
  // its week row is recent (retention keeps this week's): it goes with the worker
  expect(after.weeks.every((w) => w.workerId !== liar.workerId)).toBe(true);
  expect(after.weeks.length).toBeGreaterThan(0);
  expect(after.workers.map((w) => w._id).sort()).toEqual([a.workerId, b.workerId].sort());
  expect(after.streaks.every((s) => s.workerId !== liar.workerId)).toBe(true);
  expect(after.streaks.length).toBeGreaterThan(0); // the live workers keep theirs
  expect(after.quotaUse).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("admin:purge deletes a replicated job's instances with it, its results too", async () => {
  const farm = await newFarm();
  const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
  const jobId = await submitReplicated(farm, { quorum: 2 });
  await complete(farm, a, jobId, { big: "r".repeat(200_000) });
  await complete(farm, b, jobId, { big: "r".repeat(200_000) });
  expect((await rowsOf(farm)).instances).toHaveLength(2);
  expect((await rowsOf(farm)).results).toHaveLength(1);
  expect(await farm.t.mutation(internal.admin.purge, { jobId })).toBe(true);
  expect((await rowsOf(farm)).instances).toEqual([]);
  expect((await rowsOf(farm)).results).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a deleted worker with more streak rows than one call deletes keeps its row until a later pass has deleted them all", async () => {
  const farm = await newFarm();
  const worker = await donor(farm, "many-types");
  await farm.t.mutation(internal.admin.revokeWorker, { workerId: worker.workerId });
  await farm.t.run(async (ctx) => {
    for (let i = 0; i < WORKER_ROWS_PER_CALL + 200; i++) await ctx.db.insert("trustStreaks", { orgId: farm.orgId, workerId: worker.workerId, type: `t${i}`, streak: 1, valid: 1, invalid: 0 });
  });
  vi.advanceTimersByTime(2 * DAY);
  const first = await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: DAY });
  expect(first.more).toBe(true);
  const { workers, streaks } = await rowsOf(farm);
  expect(workers.map((w) => w._id)).toEqual([worker.workerId]);
  expect(streaks.length).toBeGreaterThanOrEqual(200);
  await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: DAY });
  expect(await rowsOf(farm)).toMatchObject({ workers: [], streaks: [] });
});

test("a deleted worker with more credit weeks than one call deletes keeps its row until a later pass has deleted them all", async () => {
  const farm = await newFarm();
  const worker = await donor(farm, "many-weeks");
  await farm.t.mutation(internal.admin.revokeWorker, { workerId: worker.workerId });
  const today = Math.floor(Date.now() / DAY);
  await farm.t.run(async (ctx) => {
    // recent weeks (retention keeps them by age): only the worker's deletion takes them
    for (let i = 0; i < WORKER_ROWS_PER_CALL + 200; i++) {
      await ctx.db.insert("creditWeeks", { orgId: farm.orgId, workerId: worker.workerId, week: today + 7 * i, cpuMs: 1, wallMs: 1, jobs: 1, failed: 0 });
    }
  });
  vi.advanceTimersByTime(2 * DAY);
  const first = await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: DAY });
  expect(first.more).toBe(true);
  const { workers, weeks } = await rowsOf(farm);
  expect(workers.map((w) => w._id)).toEqual([worker.workerId]);
  expect(weeks.length).toBeGreaterThanOrEqual(200);
  await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: DAY });
  expect(await rowsOf(farm)).toMatchObject({ workers: [], weeks: [] });
});

test("twenty revoked workers with hundreds of rows each: every records pass stays within half of Convex's 8,192 writes, and later passes delete the rest", async () => {
  const farm = await newFarm();
  const workers = [];
  for (let w = 0; w < 20; w++) workers.push(await donor(farm, `heavy-${w}`));
  const today = Math.floor(Date.now() / DAY);
  for (const worker of workers) {
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: worker.workerId });
    await farm.t.run(async (ctx) => {
      for (let i = 0; i < 150; i++) {
        await ctx.db.insert("trustStreaks", { orgId: farm.orgId, workerId: worker.workerId, type: `t${i}`, streak: 1, valid: 1, invalid: 0 });
        await ctx.db.insert("quotaUse", { orgId: farm.orgId, workerId: worker.workerId, day: today - i, claimed: 1 });
        await ctx.db.insert("creditWeeks", { orgId: farm.orgId, workerId: worker.workerId, week: today + 7 * i, cpuMs: 1, wallMs: 1, jobs: 1, failed: 0 });
      }
    });
  }
  vi.advanceTimersByTime(2 * DAY);
  let passes = 0;
  for (;;) {
    const { usage, result } = await measure(farm.t, "mutation", internal.retention.sweepRecords, { olderThanMs: DAY });
    passes++;
    expect(usage.documentsWritten).toBeLessThanOrEqual(4096);
    if (!result.more) break;
    expect(passes).toBeLessThan(20);
  }
  expect(passes).toBeGreaterThan(1);
  expect(await rowsOf(farm)).toMatchObject({ workers: [], streaks: [], quotaUse: [], weeks: [] });
  expect(await checkConsistency(farm.t)).toEqual([]);
});
