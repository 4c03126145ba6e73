import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { LIMITS, TIMING } from "../../convex/core/limits";
import { enrollWorker, runningJobs, expectCode, newFarm, snapshot, type Enrolled, type Farm, overviewNow, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function oneRunning(options: { maxAttempts?: number; leaseMs?: number } = {}) {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", ...options });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  return { farm, w, jobId, claim };
}

const getJob = (farm: Farm, jobId: Id<"jobs">) => farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
const events = (farm: Farm) => farm.t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).map((e) => e.kind));

/** Move fake time forward and let the scheduled functions that came due finish. */
async function advance(farm: Farm, ms: number) {
  vi.advanceTimersByTime(ms);
  await farm.t.finishInProgressScheduledFunctions();
}

describe("leases", () => {
  test("heartbeat extends the lease and stores progress and status text", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ leaseMs: 10_000 });
    await advance(farm, 6_000);
    const hb = await farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, progress: 0.25, status: "warming up" });
    expect(hb).toEqual({ cancel: false, leaseExpiresAt: Date.now() + 10_000 });
    // past the original expiry, the janitor finds the lease extended and re-arms instead of reclaiming
    await advance(farm, 6_000);
    expect(await getJob(farm, jobId)).toMatchObject({ status: "running", progress: 0.25, statusText: "warming up" });
    const mine = await runningJobs(farm.t, w.apiKey);
    expect(mine).toEqual([expect.objectContaining({ jobId, leaseId: claim.leaseId, progress: 0.25, cancelRequested: false })]);
    // without further heartbeats the re-armed check reclaims it
    await advance(farm, 5_000);
    expect(await getJob(farm, jobId)).toMatchObject({ status: "pending", attempt: 1 });
    expect(await events(farm)).toEqual(["submitted", "claimed", "heartbeat-expired", "retried"]);
  });

  test("one scheduled check per lease, however many heartbeats", async () => {
    const { farm, w, claim } = await oneRunning({ leaseMs: 10_000 });
    for (let i = 0; i < 10; i++) {
      await farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId });
    }
    const scheduled = await farm.t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect());
    expect(scheduled.filter((s) => s.name.includes("checkLease"))).toHaveLength(1);
  });

  test("an expired lease is retried with backoff, then dead-lettered when attempts run out", async () => {
    const { farm, w, jobId } = await oneRunning({ maxAttempts: 2, leaseMs: 5_000 });
    await advance(farm, 5_000);
    const retried = await getJob(farm, jobId);
    expect(retried).toMatchObject({ status: "pending", attempt: 1 });
    expect(retried!.error).toMatch(/lease expired/);
    expect(retried!.availableAt).toBeGreaterThan(Date.now());
    await farm.t.finishAllScheduledFunctions(vi.runAllTimers); // backoff passes
    const [second] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(second).toMatchObject({ jobId, attempt: 2 });
    await advance(farm, 5_000);
    expect(await getJob(farm, jobId)).toMatchObject({ status: "dead", attempt: 2 });
    expect(await events(farm)).toContain("dead");
  });

  test("a stale lease is refused after expiry and changes nothing", async () => {
    const { farm, w, claim } = await oneRunning({ leaseMs: 5_000 });
    await advance(farm, 5_000);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1 }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "x" }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claim.leaseId, chunk: "x" }), "stale_lease");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("an old lease is refused once the job was claimed again", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ leaseMs: 5_000 });
    await advance(farm, 5_000);
    await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
    const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(again.jobId).toBe(jobId);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: "old" }), "stale_lease");
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: again.leaseId, result: "new" });
    expect(await getJob(farm, jobId)).toMatchObject({ status: "succeeded", result: "new" });
  });

  test("another worker's lease is foreign and refused", async () => {
    const { farm, claim } = await oneRunning();
    const other: Enrolled = await enrollWorker(farm, { name: "other" });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: other.apiKey, leaseId: claim.leaseId }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: other.apiKey, leaseId: claim.leaseId, result: 1 }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: other.apiKey, leaseId: "" }), "stale_lease");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test.each([-0.1, 1.5, Number.NaN])("refuses progress %s and changes nothing", async (progress) => {
    const { farm, w, claim } = await oneRunning();
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, progress }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("refuses an over-long status text", async () => {
    const { farm, w, claim } = await oneRunning();
    const status = "s".repeat(LIMITS.statusTextChars + 1);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, status }), "too_large");
  });
});

describe("results and failures", () => {
  test("complete refuses a result over the cap and leaves the job running", async () => {
    const { farm, w, jobId, claim } = await oneRunning();
    const before = await snapshot(farm.t);
    const result = "r".repeat(LIMITS.resultBytes);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result }), "too_large");
    expect(await snapshot(farm.t)).toEqual(before);
    expect((await getJob(farm, jobId))!.status).toBe("running");
  });

  test("complete refuses a result whose JSON fits but whose stored size does not, and leaves the job running", async () => {
    const { farm, w, jobId, claim } = await oneRunning();
    const before = await snapshot(farm.t);
    const result: number[][] = Array.from({ length: 15 }, () => new Array<number>(8192).fill(1));
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result }), "too_large");
    expect(await snapshot(farm.t)).toEqual(before);
    expect((await getJob(farm, jobId))!.status).toBe("running");
  });

  test("a retryable failure goes back to pending after an exponential, jittered backoff", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ maxAttempts: 5 });
    const failedAt = Date.now();
    const out = await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "boom" });
    expect(out.status).toBe("pending");
    const delay1 = out.availableAt! - failedAt;
    expect(delay1).toBeGreaterThanOrEqual(TIMING.backoffBaseMs / 2);
    expect(delay1).toBeLessThanOrEqual(TIMING.backoffBaseMs);
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    expect(await getJob(farm, jobId)).toMatchObject({ status: "pending", error: "boom", attempt: 1 });
    await advance(farm, delay1);
    const [second] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(second.attempt).toBe(2);
    const out2 = await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: second.leaseId, error: "boom again" });
    const delay2 = out2.availableAt! - Date.now();
    expect(delay2).toBeGreaterThanOrEqual(TIMING.backoffBaseMs);
    expect(delay2).toBeLessThanOrEqual(TIMING.backoffBaseMs * 2);
    expect(await events(farm)).toEqual(["submitted", "claimed", "failed", "retried", "claimed", "failed", "retried"]);
  });

  test("a non-retryable failure is dead at once", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ maxAttempts: 5 });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "bad input", retryable: false });
    expect(await getJob(farm, jobId)).toMatchObject({ status: "dead", error: "bad input" });
    const overview = await overviewNow(farm.t, w.apiKey);
    expect(overview.deadLetters).toBe(1);
  });

  test("the last attempt's failure is dead", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ maxAttempts: 1 });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "x" });
    expect((await getJob(farm, jobId))!.status).toBe("dead");
  });

  test("release gives the job back at once without burning an attempt", async () => {
    const { farm, w, jobId, claim } = await oneRunning({ maxAttempts: 1 });
    await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId });
    expect(await getJob(farm, jobId)).toMatchObject({ status: "pending", attempt: 0 });
    expect(await runningJobs(farm.t, w.apiKey)).toEqual([]);
    const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(again).toMatchObject({ jobId, attempt: 1 });
  });
});

describe("streaming output", () => {
  test("chunks are appended with a sequence number and joined in order by jobs:get", async () => {
    const { farm, w, jobId, claim } = await oneRunning();
    for (const chunk of ["one ", "two ", "", "three"]) {
      await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claim.leaseId, chunk });
    }
    const rows = await farm.t.run(async (ctx) => await ctx.db.query("jobOutput").collect());
    expect(rows.map((r) => r.seq)).toEqual([0, 1, 2]);
    expect((await getJob(farm, jobId))!.output).toBe("one two three");
  });

  test("refuses an over-long chunk and changes nothing", async () => {
    const { farm, w, claim } = await oneRunning();
    const before = await snapshot(farm.t);
    const chunk = "c".repeat(LIMITS.outputChunkBytes + 1);
    await expectCode(farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claim.leaseId, chunk }), "too_large");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("jobs:get returns the latest chunks when the output is longer than it returns", async () => {
    const { farm, jobId } = await oneRunning();
    const total = LIMITS.outputChunksReturned + 5;
    await farm.t.run(async (ctx) => {
      const job = (await ctx.db.get(jobId))!;
      for (let seq = 0; seq < total; seq++) await ctx.db.insert("jobOutput", { orgId: job.orgId, jobId, seq, chunk: `${seq};` });
    });
    const view = (await getJob(farm, jobId))!;
    expect(view.outputTruncated).toBe(true);
    expect(view.output.startsWith("5;6;")).toBe(true);
    expect(view.output.endsWith(`${total - 1};`)).toBe(true);
  });
});
