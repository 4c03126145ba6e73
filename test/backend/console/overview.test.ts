import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { bucketOf, BUCKETS, DURATION_BOUNDS_S, quantileMs } from "../../../convex/observability/histogram";
import { enrollWorker, newFarm, refreshSummaries, TEST_TYPES } from "../setup";
import { submitJob } from "../../../convex/queue/submit";
import { deadJob } from "./helpers";

afterEach(() => vi.useRealTimers());

test("wait histograms: a duration falls in the first bucket whose bound it does not pass; quantiles as Prometheus estimates them", () => {
  expect(bucketOf(0)).toBe(0);
  expect(bucketOf(10)).toBe(0); // 0.01 s: buckets are "≤ le"
  expect(bucketOf(11)).toBe(1);
  expect(bucketOf(1e12)).toBe(DURATION_BOUNDS_S.length);
  const h = new Array<number>(BUCKETS).fill(0);
  h[bucketOf(5)] = 90; // 90 fast claims
  h[bucketOf(3_000)] = 10; // 10 slow ones, in (2 s, 3 s]
  expect(quantileMs(h, 0.5)).toBe(6); // 45 of 90 in (0, 10 ms]: halfway
  expect(quantileMs(h, 0.95)).toBe(2_500); // 5 of 10 in (2 s, 3 s]: halfway
  expect(quantileMs(h.map(() => 0), 0.5)).toBeNull();
  // past the last bound the answer is that bound
  expect(quantileMs(h.map((_, i) => (i === BUCKETS - 1 ? 1 : 0)), 0.5)).toBe(DURATION_BOUNDS_S.at(-1)! * 1000);
});

test("waits of 25 and 40 minutes give a p50 and a p95 of their own (they once both read as the 2,500 s bound)", () => {
  const h = new Array<number>(BUCKETS).fill(0);
  h[bucketOf(25 * 60_000)] += 60;
  h[bucketOf(40 * 60_000)] += 40;
  const p50 = quantileMs(h, 0.5)!;
  const p95 = quantileMs(h, 0.95)!;
  expect(p50).toBeGreaterThan(20 * 60_000);
  expect(p50).toBeLessThanOrEqual(30 * 60_000);
  expect(p95).toBeGreaterThan(30 * 60_000);
  expect(p95).toBeLessThanOrEqual(45 * 60_000);
  // the same waits a second apart stay in one bucket: p50 and p95 both within it
  const same = new Array<number>(BUCKETS).fill(0);
  same[bucketOf(40 * 60_000)] = 100;
  expect(quantileMs(same, 0.5)).toBeGreaterThan(30 * 60_000);
  expect(quantileMs(same, 0.95)).toBeLessThanOrEqual(45 * 60_000);
});

test("overview: counts, workers online, finished and failed per minute, queue wait p50/p95, oldest waiting job", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, capabilities: ["cpu"] });
  await enrollWorker(farm, { name: "idle" });
  // nine jobs claimed at once, one after waiting 40 s
  for (let i = 0; i < 9; i++) {
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "fast" });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: c.leaseId });
  }
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "slow" });
  vi.advanceTimersByTime(40_000);
  const [slow] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
  await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: slow.leaseId });
  await deadJob(farm, op);
  const waiting = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "waits", requiredCapabilities: ["gpu"] });
  vi.advanceTimersByTime(90_000);
  await refreshSummaries(farm.t);
  const overview = await farm.t.query(api.console.overview, { apiKey: op.apiKey });
  expect(overview.counts).toEqual({ pending: 1, running: 0, succeeded: 10, canceled: 0, dead: 1 });
  expect(overview.workers).toBe(2);
  expect(overview.onlineUntil.filter((until) => until > Date.now())).toHaveLength(2);
  const finished = overview.throughput.reduce((s, m) => s + m.finished, 0);
  const failed = overview.throughput.reduce((s, m) => s + m.failed, 0);
  expect([finished, failed]).toEqual([11, 1]);
  // ten waits of 0 and one of 40 s, as Prometheus would estimate them: p50 inside (0, 10 ms], p95 inside (30 s, 45 s]
  expect(overview.queueWait).toEqual({ p50Ms: 6, p95Ms: 36_750, samples: 11 });
  expect(Date.now() - overview.oldestReadyAt!).toBe(90_000);
  expect(waiting).toBeTruthy();
});

test("workers page and leaderboard: slots in use, jobs done, CPU time given this week and all time", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, name: "op" });
  const donor = await enrollWorker(farm, { name: "donor", maxConcurrentJobs: 4 });
  const run = async (apiKey: string, cpuMs: number) => {
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey, capabilities: TEST_TYPES });
    vi.advanceTimersByTime(10_000);
    await farm.t.mutation(api.workers.complete, { apiKey, leaseId: c.leaseId, cpuMs });
  };
  await run(donor.apiKey, 9_000);
  vi.setSystemTime(Date.UTC(2026, 10, 23, 12)); // next week
  await run(op.apiKey, 5_000);
  await run(donor.apiKey, 2_000);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.mutation(api.workers.claim, { apiKey: donor.apiKey, capabilities: TEST_TYPES }); // one running now
  const board = await farm.t.query(api.console.leaderboard, { apiKey: op.apiKey, weekOf: Date.now() });
  expect(board.week.map((r) => [r.name, r.cpuMs, r.jobs])).toEqual([["op", 5_000, 1], ["donor", 2_000, 1]]);
  expect(board.allTime.map((r) => [r.name, r.cpuMs, r.jobs])).toEqual([["donor", 11_000, 2], ["op", 5_000, 1]]);
  const { page: workers } = await farm.t.query(api.console.workers, { apiKey: op.apiKey });
  expect(workers.find((w) => w.name === "donor")).toMatchObject({ slotsInUse: 1, jobsDone: 2, cpuMs: 11_000, maxConcurrentJobs: 4 });
  expect(workers.find((w) => w.name === "donor")!.onlineUntil).toBeGreaterThan(Date.now());
  expect(workers.find((w) => w.name === "op")).toMatchObject({ isMe: true, canManage: true, slotsInUse: 0 });
});

test("overview per job type and client key, from the metrics' counters: a slow type's wait p95 apart from a quick one's, each key's jobs and ends", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, maxConcurrentJobs: 8 });
  const { key: nightly } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "nightly" });
  const run = async (clientKey: string, type: string, waitMs: number) => {
    await farm.t.mutation(api.jobs.submit, { clientKey, type });
    vi.advanceTimersByTime(waitMs);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: c.leaseId });
  };
  for (let i = 0; i < 10; i++) await run(farm.clientKey, "fast", 300);
  for (let i = 0; i < 4; i++) await run(nightly, "slow", 40 * 60_000);
  await farm.t.mutation(api.jobs.submit, { clientKey: nightly, type: "slow" });
  await refreshSummaries(farm.t);
  const overview = await farm.t.query(api.console.overview, { apiKey: op.apiKey });
  const waits = Object.fromEntries(overview.waitsByType.map((t) => [t.type, t]));
  expect(overview.waitsByType.map((t) => t.type)).toEqual(["fast", "slow"]); // the busier first
  expect(waits.fast.p95Ms).toBeLessThanOrEqual(500);
  expect(waits.slow.p95Ms).toBeGreaterThan(30 * 60_000);
  expect(waits.slow.p95Ms).toBeLessThanOrEqual(45 * 60_000);
  // one table of client keys: the key with work first (its share of the farm), then the one whose jobs only ended
  const row = (k: (typeof overview.clientKeys)[number]) => [k.name, k.weight, k.running, k.waiting, k.oldestReadyAt, k.finished];
  expect(overview.clientKeys.map(row)).toEqual([
    ["nightly", 1, 0, 1, Date.now(), { succeeded: 4, dead: 0, canceled: 0 }],
    ["ci", 1, 0, 0, null, { succeeded: 10, dead: 0, canceled: 0 }],
  ]);
  expect(overview.finished).toEqual({ succeeded: 14, dead: 0, canceled: 0 });
});

test("overview's one table of client keys: keys with work (weight, limit, share), then keys whose jobs only ended, and a host app's own jobs; each key once", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, maxConcurrentJobs: 8 });
  const finish = async () => {
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: c.leaseId });
  };
  // a host app's own job and a key's two jobs end, then two hours pass: neither has work nor started any lately
  await farm.t.run(async (ctx) => void (await submitJob(ctx, { orgId: farm.orgId, type: "x" })));
  await finish();
  const old = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "old" });
  for (let i = 0; i < 2; i++) await farm.t.mutation(api.jobs.submit, { clientKey: old.key, type: "x" });
  await finish();
  await finish();
  vi.advanceTimersByTime(2 * 3_600_000);
  // the farm's key has work now: one running of at most 5, two waiting, and one job that ended
  const ciKeyId = await farm.t.run(async (ctx) => (await ctx.db.query("clientKeys").collect()).find((k) => k.name === "ci")!._id);
  await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId: ciKeyId, weight: 2, maxRunning: 5 });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await finish();
  const readyAt = Date.now();
  for (let i = 0; i < 3; i++) await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
  await refreshSummaries(farm.t);
  const { clientKeys, finished } = await farm.t.query(api.console.overview, { apiKey: op.apiKey });
  const row = (k: (typeof clientKeys)[number]) => [k.name, k.clientKeyId === null, k.weight, k.maxRunning, k.running, k.waiting, k.shareLastHour, k.oldestReadyAt, k.finished];
  const [first, ...idle] = clientKeys.map(row);
  idle.sort((a, b) => (a[0] === b[0] ? 0 : a[0]! < b[0]! ? -1 : 1));
  expect(first).toEqual(["ci", false, 2, 5, 1, 2, 1, readyAt, { succeeded: 1, dead: 0, canceled: 0 }]);
  expect(idle).toEqual([
    ["none", true, null, null, 0, 0, 0, null, { succeeded: 1, dead: 0, canceled: 0 }],
    ["old", false, 1, null, 0, 0, 0, null, { succeeded: 2, dead: 0, canceled: 0 }],
  ]);
  expect(finished).toEqual({ succeeded: 4, dead: 0, canceled: 0 });
});
