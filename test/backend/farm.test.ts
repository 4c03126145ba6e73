import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { enrollWorker, expectCode, newFarm, snapshot, type Enrolled, type Farm, overviewNow, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

async function deadJob(farm: Farm, w: Enrolled, type = "x"): Promise<Id<"jobs">> {
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: "fatal", retryable: false });
  return jobId;
}

describe("dead letters (operator)", () => {
  test("list, retry with fresh attempts, purge with output and events", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const jobId = await deadJob(farm, w);
    const listed = await farm.t.query(internal.admin.listDead, { orgId: farm.orgId });
    expect(listed).toEqual([expect.objectContaining({ jobId, error: "fatal", attempt: 1 })]);

    await farm.t.mutation(internal.admin.retryDead, { jobId });
    expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ status: "pending", attempt: 0 });
    expect(await farm.t.query(internal.admin.listDead, { orgId: farm.orgId })).toEqual([]);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: c.leaseId, chunk: "log" });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: "fatal", retryable: false });

    await expectCode(farm.t.mutation(internal.admin.retryDead, { jobId: await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "p" }) }), "invalid_argument");
    expect(await farm.t.mutation(internal.admin.purge, { jobId })).toBe(true);
    const left = await farm.t.run(async (ctx) => ({
      job: await ctx.db.get(jobId),
      output: await ctx.db.query("jobOutput").collect(),
      events: (await ctx.db.query("jobEvents").collect()).filter((e) => e.jobId === jobId),
    }));
    expect(left).toEqual({ job: null, output: [], events: [] });
    expect((await overviewNow(farm.t, w.apiKey)).deadLetters).toBe(0);
  });

  test("purge refuses unfinished jobs", async () => {
    const farm = await newFarm();
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    await expectCode(farm.t.mutation(internal.admin.purge, { jobId }), "invalid_argument");
  });
});

describe("manager workers (canManage)", () => {
  test("may retry, cancel and purge one job through the operator API (consoleActions:*), with the same answers an operator key gets", async () => {
    const farm = await newFarm();
    const manager = await enrollWorker(farm, { canManage: true, name: "panel" });
    const dead1 = await deadJob(farm, manager);
    const dead2 = await deadJob(farm, manager);
    expect((await farm.t.query(api.farm.deadLetters, { apiKey: manager.apiKey })).map((d) => d.jobId).sort()).toEqual([dead1, dead2].sort());
    await farm.t.mutation(api.consoleActions.retryJob, { apiKey: manager.apiKey, jobId: dead1 });
    expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: dead1 }))!.status).toBe("pending");
    expect(await farm.t.mutation(api.consoleActions.cancelJob, { apiKey: manager.apiKey, jobId: dead1 })).toEqual({ status: "canceled" });
    expect(await farm.t.mutation(api.consoleActions.purgeJob, { apiKey: manager.apiKey, jobId: dead2 })).toEqual({ purged: true });
    expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: dead2 })).toBeNull();
    await expectCode(farm.t.mutation(api.consoleActions.purgeJob, { apiKey: manager.apiKey, jobId: dead1 }), "invalid_argument");
  });

  test("other workers are refused with forbidden and nothing changes", async () => {
    const farm = await newFarm();
    const plain = await enrollWorker(farm);
    const jobId = await deadJob(farm, plain);
    const before = await snapshot(farm.t);
    for (const fn of [api.consoleActions.retryJob, api.consoleActions.cancelJob, api.consoleActions.purgeJob]) {
      await expectCode(farm.t.mutation(fn, { apiKey: plain.apiKey, jobId }), "forbidden");
    }
    expect(await snapshot(farm.t)).toEqual(before);
  });
});

describe("farm:overview", () => {
  test("counts by status and lane, workers online, throughput per minute, dead letters", async () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-01-01T10:00:30Z"));
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["gpu"], capabilities: ["gpu"], types: ["t", "g"], maxConcurrentJobs: 8 });
    const idle = await enrollWorker(farm, { name: "idle" });
    await farm.t.mutation(api.jobs.submitBatch, {
      clientKey: farm.clientKey,
      // leases far longer than the test's clock moves, so no lease expires mid-test
      jobs: [
        { type: "t", priority: 1, leaseMs: 3_600_000 },
        { type: "t", priority: 1, leaseMs: 3_600_000 },
        { type: "t", priority: 1, leaseMs: 3_600_000 },
        { type: "g", requiredCapabilities: ["gpu"], leaseMs: 3_600_000 },
      ],
    });
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 3 });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claimed[0].leaseId, result: 1 });
    vi.advanceTimersByTime(60_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claimed[1].leaseId, result: 1 });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claimed[2].leaseId, error: "x", retryable: false });
    vi.advanceTimersByTime(6 * 60_000); // the idle worker's last call is now older than the online window
    await farm.t.mutation(api.workers.heartbeat, {
      apiKey: w.apiKey,
      leaseId: (await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities }))[0].leaseId,
    });

    const o = await overviewNow(farm.t, w.apiKey);
    expect(o.counts).toEqual({ pending: 0, running: 1, succeeded: 2, canceled: 0, dead: 1 });
    expect(o.deadLetters).toBe(1);
    expect(o.lanes.map((l) => [l.routingKey, l.pending, l.running]).sort()).toEqual([["g,gpu", 0, 1], ["t", 0, 0]]);
    expect(o.workersOnline).toBe(1);
    expect(o.workers.find((x) => x.workerId === idle.workerId)!.online).toBe(false);
    const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000) * 60_000;
    expect(o.throughput).toEqual([
      { minuteStart: minute("2026-01-01T10:00:00Z"), finished: 1, failed: 0 },
      { minuteStart: minute("2026-01-01T10:01:00Z"), finished: 2, failed: 1 },
    ]);
    expect(o.finishedLastHour).toBe(3);
    vi.advanceTimersByTime(59 * 60_000);
    expect((await overviewNow(farm.t, w.apiKey)).throughput).toEqual([]);
  });

  test("every transition leaves an audit event", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: c.leaseId });
    const [d] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: d.leaseId, result: null });
    const rows = await farm.t.run(async (ctx) => await ctx.db.query("jobEvents").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect());
    expect(rows.map((r) => r.kind)).toEqual(["submitted", "claimed", "released", "claimed", "done"]);
    expect(rows.every((r) => r.orgId === farm.orgId)).toBe(true);
    expect(rows[1].workerId).toBe(w.workerId);
  });
});
