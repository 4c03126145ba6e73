import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import { TIMING } from "../../convex/core/limits";
import { eventKinds, inboxOf, jobRow, runDue, waiterRow } from "./queueState";
import { enrollWorker, expectCode, newFarm, snapshot, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (farm: Farm) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
const leave = (farm: Farm, w: Enrolled) => farm.t.mutation(api.workers.leave, { apiKey: w.apiKey });

/** The summary as farm:overview shows it, once the summariser has run. */
async function overview(farm: Farm, w: Enrolled) {
  vi.advanceTimersByTime(TIMING.summaryMinGapMs + TIMING.summaryFirstDelayMs);
  await farm.t.finishInProgressScheduledFunctions();
  return await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
}

describe("workers:leave", () => {
  test("revokes the caller's own key: every later call with it is refused, and nothing else changes on a refused call", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    expect(await leave(farm, w)).toEqual({ handedBack: 0 });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.query(api.workers.doorbell, { apiKey: w.apiKey }), "revoked");
    await expectCode(farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES }), "revoked");
    await expectCode(leave(farm, w), "revoked");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("hands its running job back at once without burning an attempt, and its offered job to another worker", async () => {
    const farm = await newFarm();
    const leaving = await enrollWorker(farm, { name: "leaving", maxConcurrentJobs: 2 });
    const running = await submit(farm);
    const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: leaving.apiKey, capabilities: TEST_TYPES, max: 1 });
    expect(claim.jobId).toBe(running);
    // One slot free: it waits, and the dispatcher offers it the next job.
    await farm.t.mutation(api.workers.ready, { apiKey: leaving.apiKey, capabilities: TEST_TYPES, slots: 2 });
    const offered = await submit(farm);
    await runDue(farm.t);
    expect((await inboxOf(farm.t, leaving.workerId)).map((r) => [r.kind, r.jobId])).toEqual([["offer", offered]]);

    expect(await leave(farm, leaving)).toEqual({ handedBack: 2 });

    const back = await jobRow(farm.t, running);
    expect(back).toMatchObject({ status: "pending", attempt: 0 });
    expect([back.workerId, back.leaseId]).toEqual([undefined, undefined]);
    expect(await eventKinds(farm.t, running)).toContain("released");
    expect((await jobRow(farm.t, offered)).queue).not.toBe("offered");
    expect(await inboxOf(farm.t, leaving.workerId)).toEqual([]);
    const waiter = await waiterRow(farm.t, leaving.workerId);
    expect([waiter?.wants, waiter?.since]).toEqual([0, undefined]);
    // Another worker gets both, from the heads.
    const other = await enrollWorker(farm, { name: "other", maxConcurrentJobs: 2 });
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: other.apiKey, capabilities: TEST_TYPES, max: 2 });
    expect(claimed.map((c) => c.jobId).sort()).toEqual([running, offered].sort());
  });

  test("a running job whose cancel was asked for ends canceled, not back in the queue", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const jobId = await submit(farm);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
    await leave(farm, w);
    expect((await jobRow(farm.t, jobId)).status).toBe("canceled");
  });

  test("it leaves farm:overview's workers at once (revoked workers are not listed), while the others stay online", async () => {
    const farm = await newFarm();
    const stays = await enrollWorker(farm, { name: "stays" });
    const leaving = await enrollWorker(farm, { name: "leaving" });
    const before = await overview(farm, stays);
    expect(before.workers.map((w) => [w.name, w.online]).sort()).toEqual([
      ["leaving", true],
      ["stays", true],
    ]);
    await leave(farm, leaving);
    const after = await overview(farm, stays);
    expect(after.workers.map((w) => [w.name, w.online, w.revoked])).toEqual([["stays", true, false]]);
    expect(after.workersOnline).toBe(1);
  });

  test("refuses a key that is malformed or unknown, with its code", async () => {
    const farm = await newFarm();
    await expectCode(farm.t.mutation(api.workers.leave, { apiKey: "fh_w_short" }), "bad_key");
    await expectCode(farm.t.mutation(api.workers.leave, { apiKey: `fh_w_${"A".repeat(43)}` }), "bad_key");
  });
});

describe("farm:overview says which lanes an online worker can run", () => {
  test("by the capabilities a worker declared, as the server allows them; before it declares, what it enrolled with", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["a", "b"], capabilities: ["a", "b", "c"], types: ["x"] });
    for (const cap of ["a", "b", "c"]) await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: [cap] });
    const lanes = async () => (await overview(farm, w)).lanes;
    const servable = async () => Object.fromEntries((await lanes()).map((l) => [l.capabilities.join(), l.servable]));
    expect(await servable()).toEqual({ "a,x": true, "b,x": true, "c,x": false });
    // what a lane nobody can run lacks: the capability nobody online offers, not the ones someone does
    expect((await lanes()).find((l) => l.capabilities.includes("c"))?.nobodyHandles).toEqual(["c"]);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: ["b", "x"], slots: 1 });
    await submit(farm); // any change wakes the summariser
    expect(await servable()).toEqual({ "a,x": false, "b,x": true, "c,x": false, x: true });
  });
});
