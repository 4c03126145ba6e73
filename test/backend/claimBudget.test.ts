import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { APP_LIMITS } from "../../convex/core/appLimits";
import { LIMITS } from "../../convex/core/limits";
import { inboxOf, jobRow, laneCounts, runDue } from "./queueState";
import { enrollWorker, newFarm, type Enrolled, type Farm, TEST_TYPES } from "./setup";
import { checkConsistency } from "./sweep/consistency";

// A claim hands each resumed job its latest checkpoint; 32 of the largest would pass Convex's 16 MiB limit on
// a function's return value. One claim hands out at most LIMITS.claimCheckpointChars of them; the rest wait.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const JOBS = 12;
/** The largest checkpoint a job may keep (512 KiB decoded), distinct per job. */
const fullCheckpoint = (i: number) => Buffer.alloc(APP_LIMITS.checkpointBytesMax, i).toString("base64");

const claim = (farm: Farm, w: Enrolled, max: number) => farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max });
type Claimed = Awaited<ReturnType<typeof claim>>;

/** 12 jobs, each run once by `first`, which saved a full checkpoint and gave it back: all pending again. */
async function resumedJobs(farm: Farm): Promise<Id<"jobs">[]> {
  const first = await enrollWorker(farm, { name: "first", maxConcurrentJobs: LIMITS.maxConcurrentJobs });
  const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: JOBS }, () => ({ type: "long" })) });
  const running = await claim(farm, first, JOBS);
  expect(running).toHaveLength(JOBS);
  for (const [i, job] of running.entries()) {
    await farm.t.mutation(api.workers.checkpoint, { apiKey: first.apiKey, leaseId: job.leaseId, data: fullCheckpoint(i + 1) });
  }
  for (const job of running) await farm.t.mutation(api.workers.release, { apiKey: first.apiKey, leaseId: job.leaseId, slots: 0 });
  return ids;
}

const checkpointChars = (jobs: Claimed) => jobs.reduce((n, j) => n + (j.checkpoint?.length ?? 0), 0);

/** Every claimed job runs under its lease with the checkpoint it was saved with; every other one is still pending. */
async function expectLeasedExactly(farm: Farm, ids: Id<"jobs">[], claimed: Claimed) {
  const taken = new Set<string>(claimed.map((j) => j.jobId));
  for (const job of claimed) {
    const row = await jobRow(farm.t, job.jobId);
    expect(row).toMatchObject({ status: "running", leaseId: job.leaseId });
    expect(job.checkpoint).toBe(fullCheckpoint(ids.indexOf(job.jobId) + 1));
  }
  for (const id of ids.filter((i) => !taken.has(i))) {
    const row = await jobRow(farm.t, id);
    expect(row.status).toBe("pending");
    expect(row.leaseId).toBeUndefined();
  }
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** The most checkpoints of the largest size one claim hands out. */
const PER_CLAIM = Math.floor(LIMITS.claimCheckpointChars / fullCheckpoint(1).length);

describe("a claim's checkpoints stay within a budget", () => {
  test("the heads: 12 jobs with 512 KiB checkpoints, a claim of 32 takes fewer, in order; the next claims take the rest", async () => {
    expect(PER_CLAIM).toBeGreaterThan(0);
    expect(PER_CLAIM).toBeLessThan(JOBS);
    const farm = await newFarm();
    const ids = await resumedJobs(farm);
    const second = await enrollWorker(farm, { name: "second", maxConcurrentJobs: LIMITS.maxConcurrentJobs });
    const one = await claim(farm, second, LIMITS.claimMax);
    expect(one.map((j) => j.jobId)).toEqual(ids.slice(0, PER_CLAIM));
    expect(checkpointChars(one)).toBeLessThanOrEqual(LIMITS.claimCheckpointChars);
    // the whole answer, payloads and all, stays near the budget, far below Convex's 16 MiB
    expect(JSON.stringify(one).length).toBeLessThan(LIMITS.claimCheckpointChars + 64 * 1024);
    await expectLeasedExactly(farm, ids, one);
    expect(await laneCounts(farm)).toEqual({ long: { pending: JOBS - one.length, running: one.length } });

    // it still wants more, so it waits: the dispatcher offers it the rest, and its next claims take them
    await runDue(farm.t);
    const claimed = [...one];
    for (let call = 0; call < 3 && claimed.length < JOBS; call++) {
      const next = await claim(farm, second, LIMITS.claimMax);
      expect(next.length).toBe(Math.min(PER_CLAIM, JOBS - claimed.length));
      expect(checkpointChars(next)).toBeLessThanOrEqual(LIMITS.claimCheckpointChars);
      claimed.push(...next);
      await expectLeasedExactly(farm, ids, claimed);
      await runDue(farm.t);
    }
    expect(claimed.map((j) => j.jobId)).toEqual(ids);
    expect(await laneCounts(farm)).toEqual({ long: { pending: 0, running: JOBS } });
  });

  test("the offers: a waiting worker offered all 12 claims them over several calls; what does not fit stays offered to it", async () => {
    const farm = await newFarm();
    const second = await enrollWorker(farm, { name: "second", maxConcurrentJobs: LIMITS.maxConcurrentJobs });
    expect(await claim(farm, second, LIMITS.claimMax)).toEqual([]);
    const ids = await resumedJobs(farm);
    await runDue(farm.t);
    expect((await inboxOf(farm.t, second.workerId)).map((o) => o.jobId).sort()).toEqual([...ids].sort());
    const claimed: Claimed = [];
    while (claimed.length < JOBS) {
      // an engine claims exactly its offers
      const offered = (await inboxOf(farm.t, second.workerId)).length;
      expect(offered).toBe(JOBS - claimed.length);
      const next = await claim(farm, second, offered);
      expect(next.length).toBe(Math.min(PER_CLAIM, offered));
      expect(checkpointChars(next)).toBeLessThanOrEqual(LIMITS.claimCheckpointChars);
      claimed.push(...next);
      for (const o of await inboxOf(farm.t, second.workerId)) expect((await jobRow(farm.t, o.jobId!)).queue).toBe("offered");
      await expectLeasedExactly(farm, ids, claimed);
    }
    expect(new Set(claimed.map((j) => j.jobId))).toEqual(new Set(ids));
    expect(await inboxOf(farm.t, second.workerId)).toEqual([]);
  });

  test("jobs without checkpoints are not held back: 32 plain jobs are claimed at once", async () => {
    const farm = await newFarm();
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: LIMITS.claimMax }, () => ({ type: "x" })) });
    const w = await enrollWorker(farm, { maxConcurrentJobs: LIMITS.maxConcurrentJobs });
    expect(await claim(farm, w, LIMITS.claimMax)).toHaveLength(LIMITS.claimMax);
  });
});
