// Contention (issue 18 item 7): under saturation every completion declares its freed slot and every round of the
// dispatcher reads waiting workers. A round offers only to workers that were waiting when it was scheduled, so the
// completions that start waiting meanwhile are not in its read set (the next round serves them); and a busy
// dispatcher that finds ready jobs but no waiter stays scheduled a moment instead of going idle, so the completions
// meanwhile find it scheduled and only read the org's dispatch state row instead of re-arming it (a write every
// other completion would conflict with). bench/contention.bench.ts measures the conflicts these avoid.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LINGER_MS, LINGER_ROUND_MS } from "../../convex/dispatch";
import { installReadRecorder, recordReads } from "../../bench/compare/readRecorder";
import { checkConsistency } from "./sweep/consistency";
import { advance, dispatchState, inboxOf, runDue, scheduled, waiterRow } from "./queueState";
import { enrollWorker, newFarm, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (farm: Farm) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
const ready = (farm: Farm, w: Enrolled) => farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots: 1 });
const offered = async (farm: Farm, w: Enrolled) => (await inboxOf(farm.t, w.workerId)).filter((r) => r.kind === "offer").map((r) => r.jobId);
const dispatchRuns = async (farm: Farm) => (await scheduled(farm.t, "dispatch:run")).filter((s) => s.state.kind === "success").length;

describe("a dispatcher round reads only workers that waited when it was scheduled", () => {
  test("a worker that starts waiting after the round was scheduled is not read by it, and is served by the next round", async () => {
    const farm = await newFarm();
    const [first, second] = await submitTwo(farm);
    const a = await enrollWorker(farm, { name: "a" });
    const b = await enrollWorker(farm, { name: "b" });
    await ready(farm, a); // work is there: the dispatcher is scheduled now, waiting for a only
    const [round] = await scheduled(farm.t, "dispatch:run", "pending");
    const waitingBy = (round.args[0] as { waitingBy: number }).waitingBy;
    expect(waitingBy).toBe(Date.now());
    vi.setSystemTime(Date.now() + 5);
    await ready(farm, b); // starts waiting after: the scheduled round is left alone
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toHaveLength(1);
    const bWaiter = (await waiterRow(farm.t, b.workerId))!;

    installReadRecorder();
    const { result, docs } = await recordReads(() => farm.t.mutation(internal.dispatch.run, { orgId: farm.orgId, generation: 0, waitingBy }));
    expect(result).toEqual({ stale: false, offered: 1 });
    expect(docs.has(bWaiter._id)).toBe(false);
    expect(await offered(farm, a)).toEqual([first]);
    expect(await offered(farm, b)).toEqual([]);
    expect((await dispatchState(farm)).scheduled).toBe(true); // b came meanwhile and work is left: another round

    await runDue(farm.t);
    expect(await offered(farm, b)).toEqual([second]);
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: false, waiters: false });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("a round scheduled without `waitingBy` (the watchdog's) serves every worker waiting when it runs", async () => {
    const farm = await newFarm();
    await submit(farm);
    const a = await enrollWorker(farm);
    await ready(farm, a);
    vi.setSystemTime(Date.now() + 5);
    expect(await farm.t.mutation(internal.dispatch.run, { orgId: farm.orgId, generation: 0 })).toEqual({ stale: false, offered: 1 });
  });
});

describe("a busy dispatcher lingers instead of going idle", () => {
  test("after an offer, with ready jobs but nobody waiting, it stays scheduled; a completion meanwhile leaves its state row alone and is served", async () => {
    const farm = await newFarm();
    await submitTwo(farm);
    await submit(farm);
    const a = await enrollWorker(farm);
    await ready(farm, a);
    await runDue(farm.t, 1);
    expect(await offered(farm, a)).toHaveLength(1);
    await runDue(farm.t, 1); // the next round finds ready jobs and nobody waiting
    const stateBefore = await stateRow(farm);
    expect(stateBefore).toMatchObject({ scheduled: true });
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toHaveLength(1);

    // a claims, runs and completes, declaring its slot free again: the dispatcher is still scheduled
    const [job] = await farm.t.mutation(api.workers.claim, { apiKey: a.apiKey, capabilities: TEST_TYPES, max: 1 });
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: job.leaseId, result: null, slots: 1 });
    expect(await stateRow(farm)).toEqual(stateBefore);
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toHaveLength(1);
    await runDue(farm.t, 2);
    expect(await offered(farm, a)).toHaveLength(1);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("it goes idle once its last offer is older than the linger, after a bounded number of rounds", async () => {
    const farm = await newFarm();
    await submitTwo(farm);
    const a = await enrollWorker(farm);
    await ready(farm, a);
    await runDue(farm.t, 1);
    expect(await offered(farm, a)).toHaveLength(1);
    const runsBefore = await dispatchRuns(farm);
    await advance(farm.t, LINGER_MS + 4 * LINGER_ROUND_MS);
    await runDue(farm.t, 4);
    expect(await dispatchState(farm)).toEqual({ scheduled: false, readyJobs: true, waiters: false });
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toEqual([]);
    expect((await dispatchRuns(farm)) - runsBefore).toBeLessThanOrEqual(LINGER_MS / LINGER_ROUND_MS + 2);
    // the next worker to declare a free slot wakes it again
    const b = await enrollWorker(farm, { name: "b" });
    await ready(farm, b);
    await runDue(farm.t);
    expect(await offered(farm, b)).toHaveLength(1);
  });

  test("a dispatcher that offered nothing in this run goes idle at once (no linger without a recent offer)", async () => {
    const farm = await newFarm();
    await submit(farm);
    const a = await enrollWorker(farm);
    await ready(farm, a);
    await farm.t.run(async (ctx) => {
      // a's waiting row is gone before the round runs (it was revoked, say): nobody to offer to
      for (const row of await ctx.db.query("laneWaiters").collect()) await ctx.db.delete(row._id);
    });
    await runDue(farm.t, 1);
    expect(await dispatchState(farm)).toMatchObject({ scheduled: false, readyJobs: true });
    expect(await scheduled(farm.t, "dispatch:run", "pending")).toEqual([]);
  });
});

async function submitTwo(farm: Farm) {
  const first = await submit(farm);
  vi.setSystemTime(Date.now() + 1);
  const second = await submit(farm);
  return [first, second];
}

async function stateRow(farm: Farm) {
  return await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).unique());
}
