import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { enrollWorker, runningJobs, expectCode, newFarm, snapshot, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function oneRunning(leaseMs = 10_000) {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", leaseMs, maxAttempts: 2 });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  const beat = (suspended?: boolean) =>
    farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, ...(suspended === undefined ? {} : { suspended }) });
  return { farm, w, jobId, claim, beat };
}

const getJob = (farm: Farm, jobId: Id<"jobs">) => farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });

async function advance(farm: Farm, ms: number) {
  vi.advanceTimersByTime(ms);
  await farm.t.finishInProgressScheduledFunctions();
}

describe("suspended jobs (frozen on their worker while the donor uses the machine)", () => {
  test("suspendedSince is set by the first suspended heartbeat, kept by the next ones, cleared by the first running one", async () => {
    const { farm, w, jobId, beat } = await oneRunning();
    expect((await getJob(farm, jobId))!.suspendedSince).toBeUndefined();
    const frozeAt = Date.now();
    await beat(true);
    await advance(farm, 3_000);
    await beat(true);
    expect(await getJob(farm, jobId)).toMatchObject({ status: "running", suspendedSince: frozeAt });
    expect(await runningJobs(farm.t, w.apiKey)).toEqual([expect.objectContaining({ jobId, suspendedSince: frozeAt })]);
    await beat(false);
    expect((await getJob(farm, jobId))!.suspendedSince).toBeUndefined();
    await beat(true);
    expect((await getJob(farm, jobId))!.suspendedSince).toBe(Date.now());
    // an older worker's heartbeat says nothing about suspension: the job runs
    await beat();
    expect((await getJob(farm, jobId))!.suspendedSince).toBeUndefined();
  });

  test("a suspended job's lease is extended by its heartbeats like any other", async () => {
    const { farm, jobId, beat } = await oneRunning(10_000);
    for (let i = 0; i < 5; i++) {
      const answer = await beat(true);
      expect(answer).toEqual({ cancel: false, leaseExpiresAt: Date.now() + 10_000 });
      await advance(farm, 6_000);
    }
    expect(await getJob(farm, jobId)).toMatchObject({ status: "running", attempt: 1 });
    // the heartbeats stop (the worker died while its job was frozen): the lease runs out, the job comes back
    await advance(farm, 10_000);
    const back = await getJob(farm, jobId);
    expect(back).toMatchObject({ status: "pending", attempt: 1 });
    expect(back!.suspendedSince).toBeUndefined();
  });

  test("a released suspended job leaves the suspension behind; the next worker's attempt starts fresh", async () => {
    const { farm, w, jobId, claim, beat } = await oneRunning();
    await beat(true);
    await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId });
    const released = await getJob(farm, jobId);
    expect(released).toMatchObject({ status: "pending" });
    expect(released!.suspendedSince).toBeUndefined();
    const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(again.jobId).toBe(jobId);
    expect((await getJob(farm, jobId))!.suspendedSince).toBeUndefined();
  });

  test("a suspended heartbeat with a stale lease or a wrong key is refused and changes nothing", async () => {
    const { farm, w, claim, beat } = await oneRunning(5_000);
    const other = await enrollWorker(farm, { name: "other" });
    await beat(true);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: other.apiKey, leaseId: claim.leaseId, suspended: true }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: "fh_w_nope", leaseId: claim.leaseId, suspended: false }), "bad_key");
    expect(await snapshot(farm.t)).toEqual(before);
    await advance(farm, 5_000);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, suspended: true }), "stale_lease");
  });
});
