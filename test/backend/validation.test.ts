import { describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { TRUST, type ValidationSpec } from "../../convex/trust/validation";
import { acceptAlone } from "../../convex/trust/validationTrust";
import { jobRow, runDue } from "./queueState";
import { expectCode, LAPTOP_FACTS, newFarm, snapshot, type Farm, TEST_TYPES } from "./setup";
import { consistent, donor, type Donor, quorumTwoWithSpare, useReplicationClock } from "./validationDonors";

useReplicationClock();

const submit = (farm: Farm, validation?: ValidationSpec) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: { n: 7 }, ...(validation ? { validation } : {}) });

const claim = async (farm: Farm, worker: Donor) => await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });

/** The worker claims the job (which must be the one it gets) and completes it with `result`. */
async function run(farm: Farm, worker: Donor, jobId: Id<"jobs">, result: unknown, cpuMs = 1_000) {
  const [lease] = await claim(farm, worker);
  expect(lease?.jobId, `${worker.name} should get the job`).toBe(jobId);
  vi.advanceTimersByTime(2_000);
  return await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: lease.leaseId, result, cpuMs });
}

const get = (farm: Farm, jobId: Id<"jobs">) => farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
const instances = (farm: Farm, jobId: Id<"jobs">) =>
  farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect());
const streak = (farm: Farm, workerId: Id<"workers">) =>
  farm.t.run(async (ctx) => (await ctx.db.query("trustStreaks").withIndex("by_worker_type", (q) => q.eq("workerId", workerId).eq("type", "x")).unique())?.streak);
const creditOf = (farm: Farm, worker: Donor) => farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });

describe("the validation field", () => {
  test("quorum 1 (or none) stores nothing on the job: it runs once, as always", async () => {
    const farm = await newFarm();
    const a = await submit(farm);
    const b = await submit(farm, { quorum: 1 });
    for (const jobId of [a, b]) expect((await jobRow(farm.t, jobId)).validation).toBeUndefined();
    expect((await get(farm, a))!.validation).toEqual({ state: "single", quorum: 1, instances: [] });
    const w = await donor(farm, "a");
    expect(await run(farm, w, a, 1)).toEqual({ status: "succeeded" });
    expect(await instances(farm, a)).toEqual([]);
    await consistent(farm);
  });

  test("bad rules are refused before anything is written", async () => {
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    const bad: ValidationSpec[] = [
      ...[{ quorum: 0 }, { quorum: 6 }, { quorum: 1.5 }, { quorum: 3, maxInstances: 2 }, { quorum: 2, maxInstances: 11 }],
      ...[{ quorum: 2, maxErrorInstances: 0 }, { quorum: 2, maxErrorInstances: 11 }, { quorum: 2, maxErrorInstances: 1.5 }],
      ...[{ quorum: 2, spare: 3 }, { quorum: 2, maxInstances: 2, spare: 1 }, { quorum: 2, spare: -1 }],
      ...[{ quorum: 2, instanceDeadlineMs: 999 }, { quorum: 2, instanceDeadlineMs: 24 * 3_600_000 + 1 }, { quorum: 2, instanceDeadlineMs: 1_500.5 }],
    ];
    for (const validation of bad) {
      await expectCode(submit(farm, validation), "invalid_argument");
      await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x" }, { type: "x", validation }] }), "invalid_argument");
    }
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("maxInstances defaults to quorum + 2", async () => {
    const farm = await newFarm();
    expect((await jobRow(farm.t, await submit(farm, { quorum: 2 }))).validation).toMatchObject({ quorum: 2, maxInstances: 4, started: 0, round: 1 });
  });
});

describe("transitions", () => {
  test("instance started: the claim writes a running instance and counts it", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const a = await donor(farm, "a");
    const [lease] = await claim(farm, a);
    expect(await instances(farm, jobId)).toMatchObject([{ n: 1, round: 1, workerId: a.workerId, workerName: "a", machineId: "machine-a", status: "running", leaseId: lease.leaseId }]);
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ started: 1 });
    expect((await get(farm, jobId))!.validation).toMatchObject({ state: "validating", quorum: 2, instances: [{ workerName: "a", status: "running" }] });
    await consistent(farm);
  });

  test("agreeing result: the second instance agrees, the job succeeds with that result, both earn credit", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    expect(await run(farm, a, jobId, { sum: 3, list: [1, 2] })).toEqual({ status: "pending" });
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");
    expect((await creditOf(farm, a)).pending).toEqual({ cpuHours: 1_000 / 3_600_000, jobs: 1 });
    expect((await creditOf(farm, a)).allTime.jobs).toBe(0);
    // same value, other key order: the same canonical JSON
    expect(await run(farm, b, jobId, { list: [1, 2], sum: 3 })).toEqual({ status: "succeeded" });
    const view = (await get(farm, jobId))!;
    expect(view.status).toBe("succeeded");
    expect(view.result).toEqual({ list: [1, 2], sum: 3 });
    expect(view.validation).toMatchObject({ state: "valid", quorum: 2 });
    expect(view.validation.instances.map((i) => [i.workerName, i.status, i.valid])).toEqual([["a", "completed", true], ["b", "completed", true]]);
    expect(new Set(view.validation.instances.map((i) => i.resultHash)).size).toBe(1);
    for (const w of [a, b]) {
      const credit = await creditOf(farm, w);
      expect(credit.allTime.jobs).toBe(1);
      expect(credit.pending.jobs).toBe(0);
      expect(await streak(farm, w.workerId)).toBe(1);
    }
    await consistent(farm);
  });

  test("disagreeing result: a third instance is started on a third machine", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await run(farm, a, jobId, 42);
    expect(await run(farm, b, jobId, 41)).toEqual({ status: "pending" });
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ started: 2, machines: ["machine-a", "machine-b"] });
    expect(await claim(farm, a)).toEqual([]);
    expect(await run(farm, c, jobId, 42)).toEqual({ status: "succeeded" });
    expect((await get(farm, jobId))!.result).toBe(42);
    const rows = await instances(farm, jobId);
    expect(rows.map((r) => [r.workerName, r.valid, r.credit])).toEqual([["a", true, "granted"], ["b", false, "denied"], ["c", true, "granted"]]);
    expect(rows[1].creditNote).toMatch(/^invalid/);
    // the liar: streak reset, quota halved, nothing credited, told why
    expect(await streak(farm, b.workerId)).toBe(0);
    const credit = await creditOf(farm, b);
    expect(credit.allTime.jobs).toBe(0);
    expect(credit.denied).toMatchObject([{ jobId, why: expect.stringMatching(/^invalid/) as unknown }]);
    expect(credit.trust.dailyQuota).toBe(TRUST.dailyJobQuota / 2);
    await consistent(farm);
  });

  test("maxInstances exhausted: dead with no_quorum, every distinct result kept, nobody credited", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2, maxInstances: 3 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await run(farm, a, jobId, 1);
    await run(farm, b, jobId, 2);
    expect(await run(farm, c, jobId, 3)).toEqual({ status: "dead" });
    const view = (await get(farm, jobId))!;
    expect(view.status).toBe("dead");
    expect(view.error).toMatch(/^no_quorum/);
    expect(view.validation.state).toBe("no_quorum");
    expect((view.validation as { results: Array<{ result: unknown }> }).results.map((r) => r.result)).toEqual([1, 2, 3]);
    for (const w of [a, b, c]) expect((await creditOf(farm, w)).allTime.jobs).toBe(0);
    expect((await instances(farm, jobId)).every((r) => r.credit === "denied" && /^no quorum/.test(r.creditNote!))).toBe(true);
    await consistent(farm);
  });

  test("a quorum out of reach ends the job at once (quorum 3 of 3, two results differ)", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 3, maxInstances: 3 });
    await run(farm, await donor(farm, "a"), jobId, 1);
    expect(await run(farm, await donor(farm, "b"), jobId, 2)).toEqual({ status: "dead" });
    await consistent(farm);
  });

  test("the same machine asking twice: neither the worker nor another worker of its machine gets a second instance", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const later = await submit(farm);
    const a = await donor(farm, "a");
    const twin = await donor(farm, "a2", "machine-a");
    await run(farm, a, jobId, 1);
    // passed over, not blocking: the job behind it is handed out instead
    expect((await claim(farm, a)).map((l) => l.jobId)).toEqual([later]);
    expect(await claim(farm, twin)).toEqual([]);
    const b = await donor(farm, "b");
    expect(await run(farm, b, jobId, 1)).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("the dispatcher offers the next instance only to a worker of another machine", async () => {
    const farm = await newFarm();
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const jobId = await submit(farm, { quorum: 2 });
    await run(farm, a, jobId, 1);
    // both wait; a is first in line, but b gets the offer
    await farm.t.mutation(api.workers.ready, { apiKey: a.apiKey, capabilities: TEST_TYPES, slots: 4 });
    vi.advanceTimersByTime(5);
    await farm.t.mutation(api.workers.ready, { apiKey: b.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await runDue(farm.t);
    expect((await jobRow(farm.t, jobId)).workerId).toBe(b.workerId);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: b.apiKey })).offers.map((o) => o.jobId)).toEqual([jobId]);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: a.apiKey })).offers).toEqual([]);
    await consistent(farm);
  });

  test("homogeneous: later instances only on machines of the first one's os and arch", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2, homogeneous: true });
    const a = await donor(farm, "a");
    const mac = await donor(farm, "mac", "machine-mac", { ...LAPTOP_FACTS, os: "darwin", arch: "arm64" });
    const b = await donor(farm, "b");
    await run(farm, a, jobId, 1);
    expect(await claim(farm, mac)).toEqual([]);
    expect(await run(farm, b, jobId, 1)).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("a worker revoked mid-validation: its running instance ends, its earlier result no longer counts", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await run(farm, a, jobId, 7);
    const [lease] = await claim(farm, b);
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: b.workerId });
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["completed", "released"]);
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lease.leaseId, result: 7 }), "revoked");
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: a.workerId });
    // a's 7 no longer counts: c's agreeing 7 is one result of the two needed
    expect(await run(farm, c, jobId, 7)).toEqual({ status: "pending" });
    expect(await run(farm, await donor(farm, "d"), jobId, 7)).toEqual({ status: "succeeded" });
    const rows = await instances(farm, jobId);
    expect(rows[0]).toMatchObject({ workerName: "a", credit: "denied", creditNote: expect.stringMatching(/revoked/) as unknown });
    await consistent(farm);
  });

  test("cancel of a replicated job: it ends at once, its running instance canceled and its worker told; nobody is credited", async () => {
    const farm = await newFarm();
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const pending = await submit(farm, { quorum: 2 });
    await run(farm, a, pending, 1);
    expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: pending })).toMatchObject({ status: "canceled" });
    expect((await instances(farm, pending))[0]).toMatchObject({ credit: "denied", creditNote: expect.stringMatching(/canceled/) as unknown });

    const running = await submit(farm, { quorum: 2 });
    const [lease] = await claim(farm, b);
    expect(lease.jobId).toBe(running);
    expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: running })).toMatchObject({ status: "canceled" });
    expect((await farm.t.query(api.workers.doorbell, { apiKey: b.apiKey })).cancel).toEqual([running]);
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: b.apiKey, leaseId: lease.leaseId })).toMatchObject({ cancel: true });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lease.leaseId, result: 1 })).toEqual({ status: "canceled" });
    expect((await instances(farm, running))[0]).toMatchObject({ status: "canceled", credit: "denied", reported: true });
    expect((await farm.t.query(api.workers.doorbell, { apiKey: b.apiKey })).cancel).toEqual([]);
    for (const w of [a, b]) expect((await creditOf(farm, w)).allTime.jobs).toBe(0);
    await consistent(farm);
  });

  test("retry of a no_quorum dead letter: a new round, the earlier instances kept apart", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2, maxInstances: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    await run(farm, a, jobId, 1);
    expect(await run(farm, b, jobId, 2)).toEqual({ status: "dead" });
    await farm.t.mutation(internal.admin.retryDead, { jobId });
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ round: 2, started: 0, workers: [], machines: [] });
    expect((await get(farm, jobId))!.validation).toMatchObject({ state: "validating", instances: [] });
    await run(farm, a, jobId, 2);
    expect(await run(farm, b, jobId, 2)).toEqual({ status: "succeeded" });
    expect((await get(farm, jobId))!.validation.instances.map((i) => i.valid)).toEqual([true, true]);
    expect((await instances(farm, jobId)).map((r) => r.round)).toEqual([1, 1, 2, 2]);
    await consistent(farm);
  });

  test("a failed instance earns nothing and frees the job for another try, on another machine", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const a = await donor(farm, "a");
    const [lease] = await claim(farm, a);
    await farm.t.mutation(api.workers.fail, { apiKey: a.apiKey, leaseId: lease.leaseId, error: "boom", cpuMs: 500 });
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["failed"]);
    expect((await creditOf(farm, a)).allTime.failed).toBe(0);
    await consistent(farm);
  });
});

describe("side by side", () => {
  const leaseOf = async (farm: Farm, worker: Donor, jobId: Id<"jobs">) => {
    const [lease] = await claim(farm, worker);
    expect(lease?.jobId, `${worker.name} should get an instance`).toBe(jobId);
    return lease.leaseId;
  };
  const slotsOf = (farm: Farm, worker: Donor) =>
    farm.t.run(async (ctx) => (await ctx.db.query("workerSlots").withIndex("by_worker", (q) => q.eq("workerId", worker.workerId)).unique())?.running);

  test("quorum instances start together, each on its own machine; the job runs once all are running", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 3 });
    const [a, b, c, d] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c"), await donor(farm, "d")];
    await leaseOf(farm, a, jobId);
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "pending", queue: "ready" });
    await consistent(farm);
    await leaseOf(farm, b, jobId);
    await leaseOf(farm, c, jobId);
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "running", validation: { started: 3, machines: ["machine-a", "machine-b", "machine-c"] } });
    expect((await jobRow(farm.t, jobId)).leaseId).toBeUndefined();
    expect(await claim(farm, d)).toEqual([]);
    const rows = await instances(farm, jobId);
    expect(rows.map((r) => r.status)).toEqual(["running", "running", "running"]);
    expect(new Set(rows.map((r) => r.leaseId)).size).toBe(3);
    for (const w of [a, b, c]) expect(await slotsOf(farm, w)).toBe(1);
    await consistent(farm);
  });

  test("the same machine asking twice while its instance runs gets no second one, nor does its twin", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const a = await donor(farm, "a");
    const twin = await donor(farm, "a2", "machine-a");
    await leaseOf(farm, a, jobId);
    expect(await claim(farm, a)).toEqual([]);
    expect(await claim(farm, twin)).toEqual([]);
    expect((await instances(farm, jobId)).length).toBe(1);
    await consistent(farm);
  });

  test("each instance heartbeats and completes under its own lease; another worker's lease is refused", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const [la, lb] = [await leaseOf(farm, a, jobId), await leaseOf(farm, b, jobId)];
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: b.apiKey, leaseId: la }), "stale_lease");
    vi.advanceTimersByTime(20_000);
    const beat = await farm.t.mutation(api.workers.heartbeat, { apiKey: a.apiKey, leaseId: la });
    expect(beat).toEqual({ cancel: false, leaseExpiresAt: Date.now() + (await jobRow(farm.t, jobId)).leaseMs });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 })).toEqual({ status: "pending" });
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: a.apiKey, leaseId: la }), "stale_lease");
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 1 })).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("disagreement while running: one more instance starts beside the one still running", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 3 });
    const [a, b, c, d, e] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c"), await donor(farm, "d"), await donor(farm, "e")];
    const [la, lb] = [await leaseOf(farm, a, jobId), await leaseOf(farm, b, jobId)];
    await leaseOf(farm, c, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: "x" });
    expect((await jobRow(farm.t, jobId)).status).toBe("running");
    await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: "y" });
    // x and y: the best group has one, c runs: one more is wanted, and only one
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "pending", queue: "ready" });
    await consistent(farm);
    await leaseOf(farm, d, jobId);
    expect((await jobRow(farm.t, jobId)).status).toBe("running");
    expect(await claim(farm, e)).toEqual([]);
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["completed", "completed", "running", "running"]);
    await consistent(farm);
  });

  test("an instance's lease expiring fails it (an error result) and starts a replacement after the retry backoff, on another machine", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const la = await leaseOf(farm, a, jobId);
    const lb = await leaseOf(farm, b, jobId);
    const { leaseMs } = await jobRow(farm.t, jobId);
    vi.advanceTimersByTime(leaseMs / 2);
    await farm.t.mutation(api.workers.heartbeat, { apiKey: b.apiKey, leaseId: lb });
    vi.advanceTimersByTime(leaseMs / 2 + 1);
    await runDue(farm.t);
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["failed", "running"]);
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "pending", queue: "delayed", attempt: 0, validation: { machines: ["machine-a", "machine-b"] } });
    expect(await slotsOf(farm, a)).toBe(0);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 }), "stale_lease");
    await consistent(farm);
    expect(await claim(farm, c)).toEqual([]);
    vi.advanceTimersByTime((await jobRow(farm.t, jobId)).availableAt - Date.now());
    await runDue(farm.t);
    await leaseOf(farm, c, jobId);
    expect((await jobRow(farm.t, jobId)).status).toBe("running");
    await consistent(farm);
  });

  test("a worker revoked while its instance runs: the instance ends, a replacement may start, the other keeps running", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await leaseOf(farm, a, jobId);
    const lb = await leaseOf(farm, b, jobId);
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: a.workerId });
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["released", "running"]);
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "pending", queue: "ready", attempt: 0 });
    await consistent(farm);
    const lc = await leaseOf(farm, c, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 3 });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: c.apiKey, leaseId: lc, result: 3 })).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("an instance that fails with retryable: false is one error result: the job goes on, the one still running keeps running", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const [la, lb] = [await leaseOf(farm, a, jobId), await leaseOf(farm, b, jobId)];
    expect(await farm.t.mutation(api.workers.fail, { apiKey: a.apiKey, leaseId: la, error: "bad input", retryable: false })).toMatchObject({ status: "pending" });
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["failed", "running"]);
    expect(await slotsOf(farm, b)).toBe(1);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: b.apiKey })).cancel).toEqual([]);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", attempt: 0, error: "bad input" });
    await consistent(farm);
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 1 })).toEqual({ status: "pending" });
    await consistent(farm);
  });

  test("quorum reached while an instance still runs: it is canceled, its worker told and its slot freed; its reported CPU time is credited up to the agreeing ones'", async () => {
    const farm = await newFarm();
    const { jobId, a, b, c, la, lb, lc } = await quorumTwoWithSpare(farm);
    vi.advanceTimersByTime(2_000);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: "r", cpuMs: 1_500 });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: "r", cpuMs: 1_000 })).toEqual({ status: "succeeded" });
    expect((await instances(farm, jobId))[2]).toMatchObject({ status: "canceled", atQuorum: true, capMs: 1_000, credit: "denied" });
    expect(await slotsOf(farm, c)).toBe(0);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: c.apiKey })).cancel).toEqual([jobId]);
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: c.apiKey, leaseId: lc })).toMatchObject({ cancel: true });
    expect((await creditOf(farm, c)).canceledAtQuorum).toEqual([{ jobId, type: "x", cpuHours: 0, credit: "denied" }]);
    await consistent(farm);
    // what the engine does on a cancel: workers:fail with the CPU time used; slower than b, it earns b's 1,000 ms
    expect(await farm.t.mutation(api.workers.fail, { apiKey: c.apiKey, leaseId: lc, error: "canceled", cpuMs: 1_800 })).toMatchObject({ status: "canceled" });
    const credit = await creditOf(farm, c);
    expect(credit.allTime.cpuHours).toBe(1_000 / 3_600_000);
    expect(credit.canceledAtQuorum).toEqual([{ jobId, type: "x", cpuHours: 1_000 / 3_600_000, credit: "granted" }]);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: c.apiKey })).cancel).toEqual([]);
    await expectCode(farm.t.mutation(api.workers.fail, { apiKey: c.apiKey, leaseId: lc, error: "again", cpuMs: 1_800 }), "stale_lease");
    await consistent(farm);
  });

  test("a canceled instance whose worker never answers: its notice goes at its lease's end, and it earns nothing", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    await leaseOf(farm, a, jobId);
    await leaseOf(farm, b, jobId);
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
    expect((await farm.t.query(api.workers.doorbell, { apiKey: a.apiKey })).cancel).toEqual([jobId]);
    vi.advanceTimersByTime((await jobRow(farm.t, jobId)).leaseMs + 1);
    await runDue(farm.t);
    for (const w of [a, b]) {
      expect((await farm.t.query(api.workers.doorbell, { apiKey: w.apiKey })).cancel).toEqual([]);
      expect((await creditOf(farm, w)).allTime.cpuHours).toBe(0);
    }
    expect((await instances(farm, jobId)).map((r) => [r.status, r.reported])).toEqual([["canceled", true], ["canceled", true]]);
    await consistent(farm);
  });

  test("no quorum reachable while an instance runs: dead at once, the running one canceled", async () => {
    const farm = await newFarm();
    const jobId = await submit(farm, { quorum: 3, maxInstances: 3 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const [la, lb] = [await leaseOf(farm, a, jobId), await leaseOf(farm, b, jobId)];
    await leaseOf(farm, c, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 2 })).toEqual({ status: "dead" });
    expect((await instances(farm, jobId)).map((r) => r.status)).toEqual(["completed", "completed", "canceled"]);
    await consistent(farm);
  });
});

describe("adaptive trust", () => {
  test("acceptAlone: never below a streak of 10, else with probability 1 − 1/streak", () => {
    expect(acceptAlone(9, 0)).toBe(false);
    expect(acceptAlone(10, 0.89)).toBe(true);
    expect(acceptAlone(10, 0.9)).toBe(false);
    expect(acceptAlone(100, 0.985)).toBe(true);
  });

  test("a trusted worker's adaptive job is accepted alone; an untrusted one's is replicated", async () => {
    const farm = await newFarm();
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    vi.spyOn(Math, "random").mockReturnValue(0);
    const first = await submit(farm, { quorum: 2, adaptive: true });
    expect(await run(farm, a, first, 1)).toEqual({ status: "pending" });
    await run(farm, b, first, 1);
    await farm.t.run(async (ctx) => {
      const row = (await ctx.db.query("trustStreaks").withIndex("by_worker_type", (q) => q.eq("workerId", a.workerId).eq("type", "x")).unique())!;
      await ctx.db.patch(row._id, { streak: 10 });
    });
    const second = await submit(farm, { quorum: 2, adaptive: true });
    expect(await run(farm, a, second, 5)).toEqual({ status: "succeeded" });
    expect((await get(farm, second))!.validation).toMatchObject({ state: "valid", instances: [{ workerName: "a", valid: true }] });
    expect((await creditOf(farm, a)).allTime.jobs).toBe(2);
    // a result accepted alone was compared with nothing: it does not extend the streak (else a trusted liar's
    // unchecked lies would lengthen it, and each check would come rarer), nor does it reset it
    expect(await streak(farm, a.workerId)).toBe(10);
    // without adaptive, a trusted worker is replicated all the same
    const third = await submit(farm, { quorum: 2 });
    expect(await run(farm, a, third, 5)).toEqual({ status: "pending" });
    await consistent(farm);
  });

  test("an invalid result resets a trusted streak: the liar's next adaptive job is replicated, not accepted alone", async () => {
    const farm = await newFarm();
    const [liar, b, c] = [await donor(farm, "liar"), await donor(farm, "b"), await donor(farm, "c")];
    // ten valid results in a row, through the worker API: the liar is trusted for type x
    for (let i = 0; i < TRUST.trustedStreak; i++) {
      const jobId = await submit(farm, { quorum: 2 });
      await run(farm, liar, jobId, i);
      expect(await run(farm, b, jobId, i)).toEqual({ status: "succeeded" });
    }
    expect(await streak(farm, liar.workerId)).toBe(TRUST.trustedStreak);
    vi.spyOn(Math, "random").mockReturnValue(0);
    // trusted, it lies on a replicated job; b and c agree on the truth
    const checked = await submit(farm, { quorum: 2 });
    await run(farm, liar, checked, "lie");
    await run(farm, b, checked, "truth");
    expect(await run(farm, c, checked, "truth")).toEqual({ status: "succeeded" });
    expect(await streak(farm, liar.workerId)).toBe(0);
    // its next adaptive job goes to another machine as well: the coin is not tossed for a streak of 0
    const next = await submit(farm, { quorum: 2, adaptive: true });
    expect(await run(farm, liar, next, "lie again")).toEqual({ status: "pending" });
    expect((await jobRow(farm.t, next)).validation?.alone).toBeUndefined();
    expect(await run(farm, b, next, "truth")).toEqual({ status: "pending" });
    await consistent(farm);
  });

  test("an invalid result halves the daily quota, which the claim enforces; valid results double it back", async () => {
    const farm = await newFarm();
    const [liar, b, c] = [await donor(farm, "liar"), await donor(farm, "b"), await donor(farm, "c")];
    await farm.t.run(async (ctx) => await ctx.db.patch(liar.workerId, { dailyQuota: 2 }));
    const jobId = await submit(farm, { quorum: 2 });
    await run(farm, liar, jobId, "wrong");
    await run(farm, b, jobId, "right");
    await run(farm, c, jobId, "right");
    expect((await creditOf(farm, liar)).trust.dailyQuota).toBe(1);
    // one claim today already: the quota of 1 is spent
    await submit(farm);
    expect(await claim(farm, liar)).toEqual([]);
    expect((await claim(farm, b)).length).toBe(1);
    // a worker over its quota waits for nothing, so no offer goes round to it
    expect(await farm.t.mutation(api.workers.ready, { apiKey: liar.apiKey, capabilities: TEST_TYPES, slots: 4 })).toEqual({ waitingFor: 0 });
    expect((await farm.t.mutation(api.workers.ready, { apiKey: c.apiKey, capabilities: TEST_TYPES, slots: 4 })).waitingFor).toBeGreaterThan(0);
    // a valid result doubles it back towards full
    await farm.t.run(async (ctx) => await ctx.db.patch(liar.workerId, { dailyQuota: TRUST.dailyJobQuota / 2 }));
    const next = await submit(farm, { quorum: 2 });
    vi.advanceTimersByTime(24 * 3_600_000);
    await run(farm, liar, next, "ok");
    await run(farm, c, next, "ok");
    expect((await farm.t.run(async (ctx) => await ctx.db.get(liar.workerId)))!.dailyQuota).toBeUndefined();
    await consistent(farm);
  });
});

describe("HTTP", () => {
  test("POST /api/jobs takes `validation`; GET /api/jobs/:id shows it", async () => {
    const farm = await newFarm();
    const headers = { Authorization: `Bearer ${farm.clientKey}`, "Content-Type": "application/json" };
    const posted = await farm.t.fetch("/api/jobs", { method: "POST", headers, body: JSON.stringify({ type: "x", validation: { quorum: 3, homogeneous: true } }) });
    expect(posted.status).toBe(201);
    const { jobId } = (await posted.json()) as { jobId: Id<"jobs"> };
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ quorum: 3, maxInstances: 5, homogeneous: true });
    const got = (await (await farm.t.fetch(`/api/jobs/${jobId}`, { headers })).json()) as { validation: unknown };
    expect(got.validation).toEqual({ state: "validating", quorum: 3, maxInstances: 5, maxErrorInstances: 5, distinct: "machine", round: 1, instances: [] });
    const bad = await farm.t.fetch("/api/jobs", { method: "POST", headers, body: JSON.stringify({ type: "x", validation: { quorum: 9 } }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_argument");
  });
});
