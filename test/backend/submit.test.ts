import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LIMITS } from "../../convex/core/limits";
import { submitJob } from "../../convex/queue/submit";
import { enrollWorker, expectCode, newFarm, snapshot, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

describe("jobs:submit", () => {
  test("stores the job pending with defaults and an audit event", async () => {
    const farm = await newFarm();
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes", payload: { n: 10 } });
    const job = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
    expect(job).toMatchObject({
      status: "pending",
      attempt: 0,
      priority: 0,
      maxAttempts: LIMITS.defaultMaxAttempts,
      output: "",
      cancelRequested: false,
    });
    const events = await farm.t.run(async (ctx) => await ctx.db.query("jobEvents").collect());
    expect(events.map((e) => e.kind)).toEqual(["submitted"]);
  });

  test("the same externalId returns the same job", async () => {
    const farm = await newFarm();
    const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "order-17" });
    const again = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "order-17" });
    expect(again).toBe(first);
    const jobs = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
    expect(jobs).toHaveLength(1);
    const found = await farm.t.query(api.jobs.byExternalId, { clientKey: farm.clientKey, externalId: "order-17" });
    expect(found!.jobId).toBe(first);
    expect(await farm.t.query(api.jobs.byExternalId, { clientKey: farm.clientKey, externalId: "nope" })).toBeNull();
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["empty type", { type: "" }, "invalid_argument"],
    ["blank type", { type: "   " }, "invalid_argument"],
    ["negative priority", { type: "x", priority: -1 }, "invalid_argument"],
    ["non-integer priority", { type: "x", priority: 1.5 }, "invalid_argument"],
    ["priority above the range", { type: "x", priority: LIMITS.priorityMax + 1 }, "invalid_argument"],
    ["NaN priority", { type: "x", priority: Number.NaN }, "invalid_argument"],
    ["capability with capitals", { type: "x", requiredCapabilities: ["GPU"] }, "invalid_argument"],
    ["capability with a space", { type: "x", requiredCapabilities: ["a b"] }, "invalid_argument"],
    ["capability too long", { type: "x", requiredCapabilities: ["a".repeat(65)] }, "invalid_argument"],
    ["empty capability", { type: "x", requiredCapabilities: [""] }, "invalid_argument"],
    ["payload over the cap", { type: "x", payload: "x".repeat(LIMITS.payloadBytes) }, "too_large"],
    ["zero maxAttempts", { type: "x", maxAttempts: 0 }, "invalid_argument"],
    ["lease too short", { type: "x", leaseMs: 10 }, "invalid_argument"],
    ["negative delay", { type: "x", delayMs: -5 }, "invalid_argument"],
    ["delay and runAt", { type: "x", delayMs: 5, runAt: 5 }, "invalid_argument"],
    ["type too long", { type: "t".repeat(LIMITS.typeChars + 1) }, "too_large"],
    ["empty externalId", { type: "x", externalId: "" }, "invalid_argument"],
  ];
  test.each(bad)("refuses %s and leaves the queue unchanged", async (_name, args, code) => {
    const farm = await newFarm();
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "existing" });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, ...(args as { type: string }) }), code);
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("counts a payload as stored: 245 KB of JSON numbers take 1.1 MB of a document and are refused, naming both", async () => {
    const farm = await newFarm();
    const payload: number[][] = Array.from({ length: 15 }, () => new Array<number>(8192).fill(0));
    expect(JSON.stringify(payload).length).toBeLessThan(LIMITS.payloadBytes);
    const before = await snapshot(farm.t);
    const error = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload }).catch((e: unknown) => e);
    const data = (error as { data?: unknown }).data;
    expect(typeof data === "string" ? data : JSON.stringify(data)).toMatch(/too_large.*payload is 1105952 bytes as stored \(245791 bytes of JSON/);
    expect(await snapshot(farm.t)).toEqual(before);
    // the same numbers at a quarter of the count fit, and the job records its stored size
    const small: number[][] = Array.from({ length: 3 }, () => new Array<number>(8192).fill(0));
    const id = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: small });
    const job = await farm.t.run(async (ctx) => await ctx.db.get(id));
    expect(job!.payloadBytes).toBe(3 * (2 + 8192 * 9) + 2);
  });

  test("accepts a payload just under the cap", async () => {
    const farm = await newFarm();
    const payload = "x".repeat(LIMITS.payloadBytes - 2); // JSON adds two quotes
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload });
  });
});

describe("jobs:submitBatch", () => {
  test("submits all jobs in order with one batch id and reports batch status", async () => {
    const farm = await newFarm();
    const ids = await farm.t.mutation(api.jobs.submitBatch, {
      clientKey: farm.clientKey,
      jobs: [1, 2, 3].map((n) => ({ type: "x", payload: n, batchId: "b1" })),
    });
    expect(ids).toHaveLength(3);
    const w = await enrollWorker(farm);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: "ok" });
    const others = ids.filter((id) => id !== c.jobId);
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: others[0] });
    const status = await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "b1" });
    expect(status).toMatchObject({ total: 3, done: false, counts: { pending: 1, succeeded: 1, canceled: 1 } });
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: others[1] });
    expect((await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "b1" })).done).toBe(true);
    expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "other" })).toMatchObject({ total: 0, done: false });
  });

  test("is atomic: one bad job rejects the whole batch", async () => {
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    await expectCode(
      farm.t.mutation(api.jobs.submitBatch, {
        clientKey: farm.clientKey,
        jobs: [{ type: "ok" }, { type: "ok" }, { type: "bad", priority: -3 }],
      }),
      "invalid_argument",
    );
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("names the bad job in the error message", async () => {
    const farm = await newFarm();
    const error = await farm.t
      .mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "ok" }, { type: "" }] })
      .catch((e: { data: { message: string } }) => e);
    expect((error as { data: { message: string } }).data.message).toMatch(/^jobs\[1\]: type must not be empty/);
  });

  test("a repeated externalId inside one batch maps to the same job", async () => {
    const farm = await newFarm();
    const ids = await farm.t.mutation(api.jobs.submitBatch, {
      clientKey: farm.clientKey,
      jobs: [{ type: "x", externalId: "e1" }, { type: "x", externalId: "e1" }, { type: "x" }],
    });
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
  });

  test(`refuses more than ${LIMITS.batchCount} jobs`, async () => {
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    const jobs = Array.from({ length: LIMITS.batchCount + 1 }, () => ({ type: "x" }));
    await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs }), "too_large");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test(`accepts exactly ${LIMITS.batchCount} jobs within the transaction limits`, async () => {
    const farm = await newFarm();
    const jobs = Array.from({ length: LIMITS.batchCount }, (_, i) => ({ type: "x", payload: { i } }));
    const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs });
    expect(new Set(ids).size).toBe(LIMITS.batchCount);
  });

  test("refuses a batch whose payloads together exceed the batch cap", async () => {
    const farm = await newFarm();
    const big = "y".repeat(LIMITS.payloadBytes - 100);
    const count = Math.ceil(LIMITS.batchPayloadBytes / big.length) + 1;
    const jobs = Array.from({ length: count }, () => ({ type: "x", payload: big }));
    await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs }), "too_large");
  });
});

describe("delayed jobs", () => {
  test("delayMs keeps a job out of reach until it is due, and the job says when", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const start = Date.now();
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", delayMs: 30_000 });
    expect(await farm.t.run(async (ctx) => await ctx.db.get(jobId))).toMatchObject({ queue: "delayed", availableAt: start + 30_000 });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    vi.advanceTimersByTime(30_000);
    await farm.t.finishInProgressScheduledFunctions();
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(c.jobId).toBe(jobId);
  });

  test("runAt schedules at an absolute time", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const runAt = Date.now() + 5_000;
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", runAt });
    expect(await farm.t.run(async (ctx) => await ctx.db.get(jobId))).toMatchObject({ queue: "delayed", availableAt: runAt });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toHaveLength(1);
  });

  test("a delayed job of higher priority does not hide a ready one", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "later", priority: 9, delayMs: 60_000 });
    const now = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "now", priority: 0 });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(c.jobId).toBe(now);
  });
});

describe("submitJob helper", () => {
  test("enqueues from a host app's own mutation in its transaction", async () => {
    const farm = await newFarm();
    const jobId = await farm.t.run(async (ctx) => await submitJob(ctx, { orgId: farm.orgId, type: "host.job", payload: { a: 1 }, priority: 5 }));
    const job = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
    expect(job).toMatchObject({ type: "host.job", priority: 5, status: "pending" });
    await expectCode(farm.t.run(async (ctx) => await submitJob(ctx, { orgId: farm.orgId, type: "" })), "invalid_argument");
  });

  test("refuses an org that does not exist", async () => {
    const farm = await newFarm();
    const orgId = await farm.t.mutation(internal.admin.createOrg, { name: "gone" });
    await farm.t.run(async (ctx) => await ctx.db.delete(orgId));
    await expectCode(farm.t.run(async (ctx) => await submitJob(ctx, { orgId, type: "x" })), "not_found");
  });
});
