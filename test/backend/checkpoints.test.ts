import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { APP_LIMITS } from "../../convex/core/appLimits";
import { jobRow } from "./queueState";
import { enrollWorker, expectCode, newFarm, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");

async function runningJob(farm: Farm, w: Enrolled, spec: { maxAttempts?: number; leaseMs?: number } = {}) {
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "long", ...spec });
  const [job] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(job.jobId).toBe(jobId);
  return job;
}

const save = (farm: Farm, w: Enrolled, leaseId: string, data: string) => farm.t.mutation(api.workers.checkpoint, { apiKey: w.apiKey, leaseId, data });

async function checkpointRows(farm: Farm) {
  return await farm.t.run(async (ctx) => await ctx.db.query("checkpoints").collect());
}

describe("saving a checkpoint", () => {
  test("keeps the latest one in a row beside the job, never in the job row", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const job = await runningJob(farm, w);
    expect(await save(farm, w, job.leaseId, base64(10))).toEqual({ bytes: 10 });
    expect(await save(farm, w, job.leaseId, base64(1000))).toEqual({ bytes: 1000 });
    const rows = await checkpointRows(farm);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ jobId: job.jobId, data: base64(1000), bytes: 1000, attempt: 1 });
    const row = await jobRow(farm.t, job.jobId);
    expect(JSON.stringify(row)).not.toContain(base64(1000));
    expect(row.checkpointed).toBe(true);
  });

  test("takes exactly 512 KiB decoded and refuses one byte more with too_large", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const job = await runningJob(farm, w);
    expect(await save(farm, w, job.leaseId, base64(APP_LIMITS.checkpointBytesMax))).toEqual({ bytes: 512 * 1024 });
    await expectCode(save(farm, w, job.leaseId, base64(APP_LIMITS.checkpointBytesMax + 1)), "too_large");
    await expectCode(save(farm, w, job.leaseId, base64(4 * 1024 * 1024)), "too_large");
    expect((await checkpointRows(farm))[0].bytes).toBe(512 * 1024);
  });

  test("refuses what is not base64, a stale lease, another worker and a bad key, storing nothing", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { name: "a" });
    const other = await enrollWorker(farm, { name: "b" });
    const job = await runningJob(farm, w);
    await expectCode(save(farm, w, job.leaseId, "not base64!"), "invalid_argument");
    await expectCode(save(farm, w, job.leaseId, "abc"), "invalid_argument");
    await expectCode(save(farm, w, job.leaseId, ""), "invalid_argument");
    await expectCode(save(farm, other, job.leaseId, base64(3)), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.checkpoint, { apiKey: "fh_w_nope", leaseId: job.leaseId, data: base64(3) }), "bad_key");
    await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: job.leaseId });
    await expectCode(save(farm, w, job.leaseId, base64(3)), "stale_lease");
    expect(await checkpointRows(farm)).toEqual([]);
    expect((await jobRow(farm.t, job.jobId)).checkpointed).toBeUndefined();
  });
});

describe("resuming from a checkpoint", () => {
  test("the next run gets it with its claim: after a release, a retry, an expired lease, on another worker", async () => {
    const farm = await newFarm();
    const a = await enrollWorker(farm, { name: "a" });
    const b = await enrollWorker(farm, { name: "b" });
    const first = await runningJob(farm, a, { maxAttempts: 5, leaseMs: 5_000 });
    expect(first.checkpoint).toBeUndefined();
    await save(farm, a, first.leaseId, base64(1));

    await farm.t.mutation(api.workers.release, { apiKey: a.apiKey, leaseId: first.leaseId });
    const [second] = await farm.t.mutation(api.workers.claim, { apiKey: b.apiKey, capabilities: TEST_TYPES });
    expect(second).toMatchObject({ jobId: first.jobId, checkpoint: base64(1) });
    await save(farm, b, second.leaseId, base64(2));

    await farm.t.mutation(api.workers.fail, { apiKey: b.apiKey, leaseId: second.leaseId, error: "boom" });
    vi.advanceTimersByTime(60_000);
    await farm.t.finishInProgressScheduledFunctions();
    const [third] = await farm.t.mutation(api.workers.claim, { apiKey: a.apiKey, capabilities: TEST_TYPES });
    expect(third).toMatchObject({ jobId: first.jobId, checkpoint: base64(2) });
    await save(farm, a, third.leaseId, base64(3));

    // the worker goes silent: its lease runs out and the job goes back with its checkpoint
    vi.advanceTimersByTime(6_000);
    await farm.t.finishInProgressScheduledFunctions();
    vi.advanceTimersByTime(60_000);
    await farm.t.finishInProgressScheduledFunctions();
    expect((await jobRow(farm.t, first.jobId)).status).toBe("pending");
    const [fourth] = await farm.t.mutation(api.workers.claim, { apiKey: b.apiKey, capabilities: TEST_TYPES });
    expect(fourth).toMatchObject({ jobId: first.jobId, checkpoint: base64(3) });
    // a job that never saved one claims without it
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "other" });
    const [fresh] = await farm.t.mutation(api.workers.claim, { apiKey: a.apiKey, capabilities: TEST_TYPES });
    expect(fresh.type).toBe("other");
    expect("checkpoint" in fresh).toBe(false);
  });
});

describe("retention", () => {
  test("a finished job's checkpoint is deleted with it", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const job = await runningJob(farm, w);
    await save(farm, w, job.leaseId, base64(100));
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: 1 });
    expect(await checkpointRows(farm)).toHaveLength(1);
    vi.advanceTimersByTime(2 * 24 * 3600_000);
    await farm.t.mutation(internal.retention.sweep, { olderThanMs: 24 * 3600_000 });
    expect(await checkpointRows(farm)).toEqual([]);
    expect(await farm.t.run(async (ctx) => await ctx.db.get(job.jobId))).toBeNull();
  });

  test("admin:purge deletes it too", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const job = await runningJob(farm, w);
    await save(farm, w, job.leaseId, base64(100));
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: job.leaseId, error: "no", retryable: false });
    await farm.t.mutation(internal.admin.purge, { jobId: job.jobId });
    expect(await checkpointRows(farm)).toEqual([]);
  });
});
