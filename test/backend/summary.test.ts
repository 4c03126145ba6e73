import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { FOLD_AGE_MS } from "../../convex/lanes/counters";
import { installReadRecorder, recordReads } from "../../bench/compare/readRecorder";
import { LIMITS, TIMING } from "../../convex/core/limits";
import { measure } from "./metrics";
import { scheduled } from "./queueState";
import { enrollWorker, expectCode, newFarm, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (farm: Farm, type = "x") => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type });

async function ranRefreshes(farm: Farm) {
  return (await scheduled(farm.t, "summary:refresh", "success")).length;
}

/** Advance fake time in steps, so a scheduled function sees the time it was due (not the end of the jump). */
async function settle(farm: Farm, ms: number) {
  const step = Math.max(250, Math.ceil(ms / 40));
  for (let done = 0; done < ms; done += step) {
    vi.advanceTimersByTime(Math.min(step, ms - done));
    await farm.t.finishInProgressScheduledFunctions();
  }
}

describe("the summariser", () => {
  test("a change asks for one refresh shortly after; changes before it runs add none", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await settle(farm, 10_000);
    const start = Date.now();
    await submit(farm);
    await submit(farm);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    const pending = await scheduled(farm.t, "summary:refresh", "pending");
    expect(pending.map((s) => s.scheduledTime)).toEqual([start + TIMING.summaryFirstDelayMs]);
    const before = await ranRefreshes(farm);
    await settle(farm, TIMING.summaryFirstDelayMs);
    expect(await ranRefreshes(farm)).toBe(before + 1);
    const o = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    expect(o.counts).toMatchObject({ pending: 1, running: 1 });
    expect(o.refreshedAt).toBe(start + TIMING.summaryFirstDelayMs);
  });

  test("while things keep changing it refreshes at most every summaryMinGapMs", async () => {
    const farm = await newFarm();
    await settle(farm, 10_000);
    const before = await ranRefreshes(farm);
    const start = Date.now();
    for (let i = 0; i < 60; i++) {
      await submit(farm); // a change every 250 ms for 15 s
      await settle(farm, 250);
    }
    await settle(farm, TIMING.summaryMinGapMs);
    const ran = (await ranRefreshes(farm)) - before;
    const elapsed = Date.now() - start;
    expect(ran).toBeLessThanOrEqual(Math.ceil(elapsed / TIMING.summaryMinGapMs));
    expect(ran).toBeGreaterThanOrEqual(3);
    const times = (await scheduled(farm.t, "summary:refresh", "success")).map((s) => s.scheduledTime).slice(-ran);
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(TIMING.summaryMinGapMs);
  });

  test("nothing changing, it never runs: no timer while idle", async () => {
    const farm = await newFarm();
    await enrollWorker(farm);
    await submit(farm);
    await settle(farm, 10_000);
    const before = await ranRefreshes(farm);
    await settle(farm, 60 * 60_000);
    expect(await ranRefreshes(farm)).toBe(before);
    expect(await scheduled(farm.t, "summary:refresh", "pending")).toEqual([]);
  });

  test("a change moves a later presence-only refresh forward", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await settle(farm, 10_000);
    await farm.t.mutation(api.workers.presence, { apiKey: w.apiKey });
    expect((await scheduled(farm.t, "summary:refresh", "pending")).map((s) => s.scheduledTime)).toEqual([Date.now() + TIMING.summaryPresenceDelayMs]);
    await submit(farm);
    expect((await scheduled(farm.t, "summary:refresh", "pending")).map((s) => s.scheduledTime)).toEqual([Date.now() + TIMING.summaryFirstDelayMs]);
  });
});

describe("counters", () => {
  test("transitions only insert counter changes; the summariser folds those older than FOLD_AGE_MS into one total per lane and org", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 4 });
    await settle(farm, 10_000);
    await submit(farm);
    await submit(farm);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    installReadRecorder();
    const { docs } = await recordReads(() => farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1, slots: 4 }));
    const counterTables = ["laneShards", "orgShards", "throughput", "counterDeltas"];
    expect([...docs.keys()].filter((id) => counterTables.some((t) => id.endsWith(t)))).toEqual([]);
    const totals = async () =>
      farm.t.run(async (ctx) => ({
        lane: (await ctx.db.query("laneShards").collect()).map((r) => [r.pending, r.running]),
        org: (await ctx.db.query("orgShards").collect()).map((r) => r.succeeded),
        deltas: (await ctx.db.query("counterDeltas").collect()).length,
      }));
    // two submits, the claim (its lane and its queue wait), the completion (its lane and the finish)
    expect(await totals()).toEqual({ lane: [[0, 0]], org: [0], deltas: 6 });
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId });
    expect((await totals()).deltas).toBe(6); // all younger than FOLD_AGE_MS: left for the next round
    vi.advanceTimersByTime(FOLD_AGE_MS + 1);
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId });
    expect(await totals()).toEqual({ lane: [[1, 0]], org: [1], deltas: 0 });
    expect((await farm.t.query(api.farm.overview, { apiKey: w.apiKey })).counts).toMatchObject({ pending: 1, running: 0, succeeded: 1 });
  });

  test("a refresh that left young changes behind runs again, so the summary catches up without another change", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await settle(farm, 10_000);
    await submit(farm);
    // the refresh the submit asked for runs now, before its change is old enough to fold
    for (const s of await scheduled(farm.t, "summary:refresh", "pending")) await farm.t.run(async (ctx) => await ctx.scheduler.cancel(s._id));
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId });
    expect((await farm.t.query(api.farm.overview, { apiKey: w.apiKey })).counts.pending).toBe(0);
    await settle(farm, TIMING.summaryMinGapMs + 1_000);
    expect((await farm.t.query(api.farm.overview, { apiKey: w.apiKey })).counts.pending).toBe(1);
    expect(await farm.t.run(async (ctx) => (await ctx.db.query("counterDeltas").collect()).length)).toBe(0);
  });
});

describe("farm:overview", () => {
  test("reads the one summary row, not the counters: the same few documents with 1 or 60 workers and lanes", async () => {
    const reads = [];
    for (const n of [1, 60]) {
      const farm = await newFarm();
      const workers = [];
      for (let i = 0; i < n; i++) workers.push(await enrollWorker(farm, { allowed: [`c${i}`], capabilities: [`c${i}`], name: `w${i}` }));
      for (let i = 0; i < n; i++) {
        await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: [`c${i}`] });
      }
      await settle(farm, 10_000);
      const o = await measure(farm.t, "query", api.farm.overview, { apiKey: workers[0].apiKey });
      expect(o.result.workers).toHaveLength(n);
      expect(o.result.lanes).toHaveLength(n);
      reads.push(o.usage.documentsRead);
    }
    expect(reads[0]).toBe(reads[1]);
    expect(reads[0]).toBeLessThanOrEqual(3);
  });

  test("shows workers with lastSeenAt (online = a call within onlineWindowMs) and the newest dead letters with short errors", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
    const quiet = await enrollWorker(farm, { name: "quiet" });
    const jobs = [await submit(farm, "t"), await submit(farm, "x")];
    const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 2 });
    for (const c of claims) {
      await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: "e".repeat(2_000), retryable: false });
      vi.advanceTimersByTime(10);
    }
    // quiet's last call (its enrollment) is older than the online window when the summary is written
    vi.advanceTimersByTime(TIMING.onlineWindowMs + 1_000);
    await farm.t.mutation(api.workers.presence, { apiKey: w.apiKey });
    await settle(farm, TIMING.summaryPresenceDelayMs);
    vi.advanceTimersByTime(61_000);
    const o = await farm.t.query(api.farm.overview, { apiKey: quiet.apiKey });
    expect(o.deadLetterList.map((d) => d.jobId)).toEqual([...jobs].reverse());
    expect(o.deadLetterList[0].error).toHaveLength(LIMITS.summaryErrorChars);
    expect(o.deadLetters).toBe(2);
    const byName = Object.fromEntries(o.workers.map((x) => [x.name, x]));
    expect(byName.laptop).toMatchObject({ online: true, isMe: false });
    expect(byName.quiet).toMatchObject({ online: false, isMe: true });
    expect(o.workersOnline).toBe(1);
    expect(o.onlineWindowMs).toBe(TIMING.onlineWindowMs);
  });

  test("reads no clock: with nothing written, the same answer however much time passes (clients derive online and ages)", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    await settle(farm, 10_000);
    const before = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    expect(before.workers[0]).toMatchObject({ online: true });
    vi.advanceTimersByTime(2 * 60 * 60_000); // past the online window and the throughput hour
    const after = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    expect(after).toEqual(before);
    expect(after.refreshedAt).toBe(before.refreshedAt);
  });

  test("a worker that says it is stopping (ready, slots 0, stopping) shows offline at once, last seen then; its next call brings it back", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const other = await enrollWorker(farm, { name: "other" });
    await settle(farm, 10_000);
    const mine = async () => (await farm.t.query(api.farm.overview, { apiKey: other.apiKey })).workers.find((x) => x.workerId === w.workerId)!;
    expect(await mine()).toMatchObject({ online: true });
    vi.advanceTimersByTime(30_000);
    const stoppedAt = Date.now();
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: [], slots: 0, stopping: true });
    await settle(farm, 10_000);
    expect(await mine()).toMatchObject({ online: false, stoppedAt, lastSeenAt: stoppedAt });
    expect((await farm.t.query(api.farm.overview, { apiKey: other.apiKey })).workersOnline).toBe(1);
    // started again: its first call (a declare, well within the minute it otherwise waits between writes)
    vi.advanceTimersByTime(5_000);
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: [], slots: 1 });
    await settle(farm, 10_000);
    const back = await mine();
    expect(back).toMatchObject({ online: true });
    expect(back.stoppedAt).toBeUndefined();
  });

  test("stopping with free slots is refused: a stopping worker takes nothing more", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await expect(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: [], slots: 1, stopping: true })).rejects.toThrow();
    await expectCode(farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: [], slots: 1, stopping: true }), "invalid_argument");
  });

  test("carries each worker's credit this week; a donor's line re-runs with the summary, not with every job it ends", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 });
    vi.advanceTimersByTime(2_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1, cpuMs: 1_800, energyJ: 18 });
    await settle(farm, 10_000);
    const o = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    expect(o.credit.days).toEqual([{ day: Math.floor(Date.now() / 86_400_000), cpuHours: 1_800 / 3_600_000, jobs: 1, energyJ: 18 }]);
  });
});
