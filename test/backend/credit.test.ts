import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { coresOf, utcDay, weekStartDay } from "../../convex/trust/credit";
import { enrollWorker, expectCode, newFarm, snapshot, type Enrolled, type Farm, TEST_TYPES } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12)); // a Wednesday
});
afterEach(() => vi.useRealTimers());

/** Submit one job, claim it, let `wallMs` pass: the lease to end it with. */
async function runningJob(farm: Farm, worker: Enrolled, wallMs: number) {
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "credit.job" });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  expect(claim.jobId).toBe(jobId);
  vi.advanceTimersByTime(wallMs);
  return claim;
}

/** A worker whose machine reports `cores` (its enrollment granting `maxCores`, when given). */
async function withCores(farm: Farm, cores: number, maxCores?: number): Promise<Enrolled> {
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 2, ...(maxCores ? { maxCores } : {}) });
  const facts = { cores, memoryMB: 16_384, os: "linux", arch: "x64", gpus: [] };
  const enrolled = await farm.t.mutation(api.workers.enroll, { token, name: `cores-${cores}`, machineId: `m-${cores}`, capabilities: TEST_TYPES, facts });
  return { ...enrolled, capabilities: TEST_TYPES };
}

const jobOf = (farm: Farm, jobId: Id<"jobs">) => farm.t.run(async (ctx) => (await ctx.db.get(jobId))!);
const HOUR = 3_600_000;

test("weeks start on Monday 00:00 UTC", () => {
  const monday = Date.UTC(2026, 10, 16);
  expect(weekStartDay(monday)).toBe(utcDay(monday));
  expect(weekStartDay(monday - 1)).toBe(utcDay(monday) - 7); // Sunday 23:59:59.999 is last week
  expect(weekStartDay(Date.UTC(2026, 10, 22, 23, 59))).toBe(utcDay(monday)); // Sunday
  expect(weekStartDay(Date.UTC(2026, 10, 19, 8))).toBe(utcDay(monday)); // Thursday
});

test("a completed job is credited the CPU time it reports, and the donor sees it", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm, { maxConcurrentJobs: 2 });
  const claim = await runningJob(farm, worker, HOUR);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, result: 1, cpuMs: HOUR / 2 });
  expect(await jobOf(farm, claim.jobId)).toMatchObject({ cpuMs: HOUR / 2, cpuMeasured: true });
  const credit = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });
  expect(credit.week).toEqual({ cpuHours: 0.5, wallHours: 0, jobs: 1, failed: 0, canceledAtQuorum: 0, energyJ: 0 });
  expect(credit.allTime).toEqual(credit.week);
});

test("cpuMs is clamped to the run's wall time × the machine's cores (the enrollment's slots until facts exist)", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm, { maxConcurrentJobs: 2 });
  const claim = await runningJob(farm, worker, 1_000);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, cpuMs: 60_000 });
  expect((await jobOf(farm, claim.jobId)).cpuMs).toBe(2_000);
});

test("hardware facts, when the worker has them, give the core count; else the enrollment's slots; never more than the enrollment's maxCores (default 256)", () => {
  const facts = { cores: 8, memoryMB: 16_384, os: "linux", arch: "x64", gpus: [] };
  expect(coresOf({ maxConcurrentJobs: 2 })).toBe(2);
  expect(coresOf({ maxConcurrentJobs: 2, facts })).toBe(8);
  expect(coresOf({ maxConcurrentJobs: 2, facts: { ...facts, cores: 0 } })).toBe(2);
  expect(coresOf({ maxConcurrentJobs: 2, facts, maxCores: 4 })).toBe(4);
  expect(coresOf({ maxConcurrentJobs: 2, facts: { ...facts, cores: 4_096 } })).toBe(256);
});

test("the enrollment's maxCores caps the cores a worker's CPU time is clamped by, whatever its facts say", async () => {
  const farm = await newFarm();
  const enrolled = await withCores(farm, 64, 2);
  const claim = await runningJob(farm, enrolled, 1_000);
  await farm.t.mutation(api.workers.complete, { apiKey: enrolled.apiKey, leaseId: claim.leaseId, cpuMs: 60_000 });
  expect((await jobOf(farm, claim.jobId)).cpuMs).toBe(2_000);
});

test("a failed attempt is credited at most its wall time × 1 core, whatever the machine's cores", async () => {
  const farm = await newFarm();
  const enrolled = await withCores(farm, 8);
  const claim = await runningJob(farm, enrolled, 1_000);
  await farm.t.mutation(api.workers.fail, { apiKey: enrolled.apiKey, leaseId: claim.leaseId, error: "boom", cpuMs: 5_000 });
  expect(await jobOf(farm, claim.jobId)).toMatchObject({ cpuMs: 1_000, cpuMeasured: true });
  expect((await farm.t.query(api.workers.myCredit, { apiKey: enrolled.apiKey })).allTime).toMatchObject({ cpuHours: 1_000 / HOUR, failed: 1 });
});

test("the clamp uses the cores the worker reported at enrollment", async () => {
  const farm = await newFarm();
  const enrolled = await withCores(farm, 8);
  const claim = await runningJob(farm, enrolled, 1_000);
  await farm.t.mutation(api.workers.complete, { apiKey: enrolled.apiKey, leaseId: claim.leaseId, cpuMs: 60_000 });
  expect((await jobOf(farm, claim.jobId)).cpuMs).toBe(8_000);
});

test("without cpuMs (an Ollama request) the attempt is credited by wall time and marked so", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const claim = await runningJob(farm, worker, HOUR / 4);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId });
  expect(await jobOf(farm, claim.jobId)).toMatchObject({ cpuMs: HOUR / 4, cpuMeasured: false });
  const credit = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });
  expect(credit.week).toEqual({ cpuHours: 0.25, wallHours: 0.25, jobs: 1, failed: 0, canceledAtQuorum: 0, energyJ: 0 });
});

test("a failed attempt is credited too, counted as failed", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const claim = await runningJob(farm, worker, HOUR);
  await farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: claim.leaseId, error: "boom", cpuMs: HOUR / 10 });
  const credit = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });
  expect(credit.week).toEqual({ cpuHours: 0.1, wallHours: 0, jobs: 0, failed: 1, canceledAtQuorum: 0, energyJ: 0 });
});

test("one row per worker per day; a new week starts from zero while all time keeps counting", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  vi.setSystemTime(Date.UTC(2026, 10, 22, 23, 0)); // Sunday 23:00
  for (let i = 0; i < 3; i++) {
    const claim = await runningJob(farm, worker, 60_000);
    await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, cpuMs: 30_000 });
  }
  const rows = await farm.t.run(async (ctx) => await ctx.db.query("creditDays").collect());
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ jobs: 3, cpuMs: 90_000, day: utcDay(Date.UTC(2026, 10, 22)) });
  vi.setSystemTime(Date.UTC(2026, 10, 23, 0, 30)); // Monday 00:30: a new week
  const claim = await runningJob(farm, worker, 60_000);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, cpuMs: 36_000 });
  const credit = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });
  expect(credit.week).toMatchObject({ cpuHours: 0.01, jobs: 1 });
  expect(credit.allTime).toMatchObject({ cpuHours: 0.035, jobs: 4 });
  // a subscriber passes its own day, so its week turns without the clock in the query
  const lastWeek = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey, day: utcDay(Date.UTC(2026, 10, 22)) });
  expect(lastWeek.week).toMatchObject({ jobs: 3 });
  const nextWeek = await farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey, day: utcDay(Date.UTC(2026, 10, 30)) });
  expect(nextWeek.week).toMatchObject({ cpuHours: 0, jobs: 0 });
  await expectCode(farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey, day: 1.5 }), "invalid_argument");
});

test("a bad cpuMs is refused and changes nothing", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const claim = await runningJob(farm, worker, 1_000);
  const before = await snapshot(farm.t);
  for (const cpuMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1e20]) {
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, cpuMs }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: claim.leaseId, error: "x", cpuMs }), "invalid_argument");
  }
  expect(await snapshot(farm.t)).toEqual(before);
  expect(await farm.t.run(async (ctx) => await ctx.db.query("creditDays").collect())).toEqual([]);
});

test("a worker's first credit of a week counts that week's days from before week rows existed", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const monday = utcDay(Date.UTC(2026, 10, 16));
  // a day row written by an older version, which kept no week rows
  await farm.t.run(async (ctx) => {
    await ctx.db.insert("creditDays", { orgId: farm.orgId, workerId: worker.workerId, day: monday, cpuMs: 5_000, wallMs: 0, jobs: 2, failed: 0 });
  });
  const claim = await runningJob(farm, worker, 10_000);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, cpuMs: 1_000 });
  const weeks = await farm.t.run(async (ctx) => await ctx.db.query("creditWeeks").collect());
  expect(weeks.map((w) => [w.week, w.cpuMs, w.jobs])).toEqual([[monday, 6_000, 3]]);
});
