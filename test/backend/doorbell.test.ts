import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { TIMING } from "../../convex/core/limits";
import { dispatchState, eventKinds, inboxOf, jobRow, laneCounts, laneLinesOf, runDue, scheduled, waiterRow } from "./queueState";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, expectCode, newBackend, newFarm, snapshot, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (farm: Farm, spec: { type?: string; leaseMs?: number } = {}) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: spec.type ?? "x", ...spec });

const doorbell = (farm: Farm, w: Enrolled) => farm.t.query(api.workers.doorbell, { apiKey: w.apiKey });

/** A worker running one job it claimed straight from the head. */
async function running(farm: Farm, w: Enrolled, leaseMs = 30_000) {
  const jobId = await submit(farm, { leaseMs });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(claim.jobId).toBe(jobId);
  return claim;
}

describe("workers:doorbell", () => {
  test("a cancel reaches the running job's worker through its doorbell, and the notice goes with the job", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await running(farm, w);
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: claim.jobId });
    expect(await doorbell(farm, w)).toEqual({ offers: [], cancel: [claim.jobId], resync: false });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "aborted", retryable: false });
    expect(await doorbell(farm, w)).toEqual({ offers: [], cancel: [], resync: false });
    expect((await jobRow(farm.t, claim.jobId)).status).toBe("canceled");
  });

  test("heartbeats, progress and output never write a row the doorbell reads", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await running(farm, w);
    const rowsItReads = async () =>
      farm.t.run(async (ctx) => ({ worker: await ctx.db.get(w.workerId), inbox: (await ctx.db.query("inbox").collect()).filter((r) => r.workerId === w.workerId) }));
    const before = await rowsItReads();
    vi.advanceTimersByTime(61_000); // past the once-a-minute presence write
    await farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId, progress: 0.5, status: "half" });
    await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claim.leaseId, chunk: "out" });
    await farm.t.mutation(api.workers.presence, { apiKey: w.apiKey });
    expect(await rowsItReads()).toEqual(before);
  });

  test("refuses a bad or revoked key and shows another org's worker only its own rows", async () => {
    const t = newBackend();
    const a = await newFarm(t, "a");
    const b = await newFarm(t, "b");
    const wa = await enrollWorker(a);
    const wb = await enrollWorker(b);
    await running(a, wa);
    const claim = (await a.t.run(async (ctx) => await ctx.db.query("jobs").first()))!;
    await a.t.mutation(api.jobs.cancel, { clientKey: a.clientKey, jobId: claim._id });
    expect(await doorbell(b, wb)).toEqual({ offers: [], cancel: [], resync: false });
    await expectCode(t.query(api.workers.doorbell, { apiKey: "fh_w_nope" }), "bad_key");
    await t.mutation(internal.admin.revokeWorker, { workerId: wb.workerId });
    await expectCode(doorbell(b, wb), "revoked");
  });
});

describe("workers:complete / fail / release with slots", () => {
  test("a worker whose first claim took all it wanted is, once free, offered work by what it claimed with, not by what it had at enrollment", async () => {
    const farm = await newFarm();
    // enrolled before its apps and x handlers existed: it advertised only "a" then; the farm allows "a", "apps" and "x"
    const w = await enrollWorker(farm, { capabilities: ["a"], allowed: ["a", "apps", "x"], types: [], maxConcurrentJobs: 1 });
    const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "a", requiredCapabilities: ["a"] });
    const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["a", "apps", "x"], max: 1 });
    expect(claim.jobId).toBe(first);
    const appJob = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["apps"] });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, slots: 1 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, w.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId: appJob })]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("complete with slots records the worker as waiting without reading lane heads, and wakes the dispatcher when work waits", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    const claim = await running(farm, w);
    const next = await submit(farm); // ready, nobody waits: the dispatcher only notes it
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: true, waiters: false });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, slots: 1 });
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 1 });
    expect(await laneLinesOf(farm.t, w.workerId)).toEqual(["x"]);
    expect(await dispatchState(farm)).toMatchObject({ scheduled: true });
    await runDue(farm.t);
    expect(await jobRow(farm.t, next)).toMatchObject({ queue: "offered", workerId: w.workerId });
  });

  test("slots count the worker's other running jobs and the offers it holds", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 4 });
    const first = await running(farm, w);
    await running(farm, w);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: first.leaseId, result: 1, slots: 3 });
    expect((await waiterRow(farm.t, w.workerId))!.wants).toBe(2); // 3 slots − 1 still running
  });

  test("slots 0 takes the worker out of every line and gives the offers it holds back at once", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    const other = await enrollWorker(farm, { name: "other" });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 2 });
    await farm.t.mutation(api.workers.ready, { apiKey: other.apiKey, capabilities: TEST_TYPES, slots: 1 });
    const jobId = await submit(farm);
    await runDue(farm.t);
    expect((await jobRow(farm.t, jobId)).workerId).toBe(w.workerId);
    const [offer] = await inboxOf(farm.t, w.workerId);
    expect(await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 0 })).toEqual({ waitingFor: 0 });
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    expect(await laneLinesOf(farm.t, w.workerId)).toEqual([]);
    expect((await scheduled(farm.t, "offerExpired")).map((s) => [s._id, s.state.kind])).toEqual([[offer.expiryCheck, "canceled"]]);
    await runDue(farm.t);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ queue: "offered", workerId: other.workerId });
    expect(await laneCounts(farm)).toEqual({ x: { pending: 0, running: 1 } });
  });

  test("a job that ends before its lease cancels its lease check instead of leaving it to run", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await running(farm, w);
    const [check] = await scheduled(farm.t, "checkLease", "pending");
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1 });
    expect((await scheduled(farm.t, "checkLease")).map((s) => [s._id, s.state.kind])).toEqual([[check._id, "canceled"]]);
  });

  test.each([-1, 33, 1.5])("refuses slots = %s and changes nothing", async (slots) => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await running(farm, w);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, slots }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "x", slots }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId, slots }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("a stale lease with slots is refused and changes nothing", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await running(farm, w);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1 });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, slots: 1 }), "stale_lease");
    await expectCode(farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId, slots: 1 }), "stale_lease");
    expect(await snapshot(farm.t)).toEqual(before);
  });
});

describe("workers:ready and workers:presence refuse bad input", () => {
  test("wrong and revoked keys, bad capabilities; nothing changes", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const gone = await enrollWorker(farm, { name: "gone" });
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: gone.workerId });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: "fh_w_nope", capabilities: TEST_TYPES, slots: 1 }), "bad_key");
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: gone.apiKey, capabilities: TEST_TYPES, slots: 1 }), "revoked");
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: ["Bad Cap"], slots: 1 }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.presence, { apiKey: farm.clientKey }), "bad_key");
    await expectCode(farm.t.mutation(api.workers.presence, { apiKey: gone.apiKey }), "revoked");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("ready never waits on capabilities the server did not allow", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["cpu"], capabilities: ["cpu"] });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: ["cpu", "gpu"], slots: 1 });
    expect((await waiterRow(farm.t, w.workerId))!.capabilities).toEqual(["cpu"]);
  });
});

describe("workers:presence", () => {
  test("writes only the worker's presence row, every call, and asks for a summary refresh within the presence delay", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.finishAllScheduledFunctions(vi.runAllTimers); // the refresh its enrollment asked for
    const workerRow = await farm.t.run(async (ctx) => await ctx.db.get(w.workerId));
    vi.advanceTimersByTime(10_000);
    expect(await farm.t.mutation(api.workers.presence, { apiKey: w.apiKey })).toEqual({ lastSeenAt: Date.now() });
    vi.advanceTimersByTime(1_000);
    expect(await farm.t.mutation(api.workers.presence, { apiKey: w.apiKey })).toEqual({ lastSeenAt: Date.now() });
    expect(await farm.t.run(async (ctx) => await ctx.db.get(w.workerId))).toEqual(workerRow);
    const refreshes = await scheduled(farm.t, "summary:refresh", "pending");
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0].scheduledTime - (Date.now() - 1_000)).toBe(TIMING.summaryPresenceDelayMs);
  });
});

describe("cancel and revoke hand offered and running jobs back", () => {
  test("canceling an offered job withdraws the offer and the worker wants one again", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 1 });
    const jobId = await submit(farm);
    await runDue(farm.t);
    const [offer] = await inboxOf(farm.t, w.workerId);
    expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId })).toEqual({ status: "canceled" });
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    expect((await scheduled(farm.t, "offerExpired")).find((s) => s._id === offer.expiryCheck)!.state.kind).toBe("canceled");
    expect(await waiterRow(farm.t, w.workerId)).toMatchObject({ wants: 1 });
    expect(await laneCounts(farm)).toEqual({ x: { pending: 0, running: 0 } });
  });

  test("admin:revokeWorker gives the worker's running and offered jobs back at once, without burning an attempt", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    const other = await enrollWorker(farm, { name: "other", maxConcurrentJobs: 2 });
    const claim = await running(farm, w);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 2 });
    const offeredJob = await submit(farm);
    await runDue(farm.t);
    expect((await jobRow(farm.t, offeredJob)).workerId).toBe(w.workerId);
    expect(await farm.t.mutation(internal.admin.revokeWorker, { workerId: w.workerId })).toEqual({ handedBack: 2, alsoRevoked: 0 });
    expect(await jobRow(farm.t, claim.jobId)).toMatchObject({ status: "pending", queue: "ready", attempt: 0 });
    expect(await jobRow(farm.t, offeredJob)).toMatchObject({ status: "pending", queue: "ready" });
    expect(await eventKinds(farm.t, claim.jobId)).toEqual(["submitted", "claimed", "released"]);
    expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
    expect(await laneLinesOf(farm.t, w.workerId)).toEqual([]);
    expect(await laneCounts(farm)).toEqual({ x: { pending: 2, running: 0 } });
    // the other worker takes both at once
    expect((await farm.t.mutation(api.workers.claim, { apiKey: other.apiKey, capabilities: TEST_TYPES, max: 2 })).map((c) => c.jobId).sort()).toEqual(
      [claim.jobId, offeredJob].sort(),
    );
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId }), "revoked");
  });

  test("admin:revokeWorker refuses an unknown worker", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.run(async (ctx) => await ctx.db.delete(w.workerId));
    await expectCode(farm.t.mutation(internal.admin.revokeWorker, { workerId: w.workerId }), "not_found");
  });
});
