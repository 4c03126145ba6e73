import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, TEST_TYPES, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

// Tue 2030-01-01 00:00:00 UTC
const START = Date.UTC(2030, 0, 1, 0, 0, 0);
const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => {
  vi.useRealTimers();
});

async function jobsOf(farm: Farm) {
  return await farm.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).filter((j) => j.scheduleId !== undefined));
}

/** Move the clock on and run every scheduled function that is due. */
async function advance(farm: Farm, ms: number) {
  vi.advanceTimersByTime(ms);
  await farm.t.finishInProgressScheduledFunctions();
}

test("a schedule submits its job at each tick of its cron line, and lists its next runs", async () => {
  const farm = await newFarm();
  const { nextRunAt } = await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "nightly", cron: "*/10 * * * *", overlap: "allow", job: { type: "j1", payload: { n: 1 } } });
  expect(nextRunAt).toBe(START + 10 * MINUTE);
  const [listed] = await farm.t.query(api.schedules.list, { clientKey: farm.clientKey });
  expect(listed).toMatchObject({ name: "nightly", cron: "*/10 * * * *", timezone: "UTC", overlap: "allow", type: "j1", paused: false, lastJob: null });
  expect(listed.nextRuns).toEqual([START + 10 * MINUTE, START + 20 * MINUTE, START + 30 * MINUTE]);
  await advance(farm, 9 * MINUTE);
  expect(await jobsOf(farm)).toHaveLength(0);
  await advance(farm, MINUTE);
  await advance(farm, 10 * MINUTE);
  const jobs = await jobsOf(farm);
  expect(jobs).toHaveLength(2);
  expect(jobs.map((j) => Math.floor(j._creationTime))).toEqual([START + 10 * MINUTE, START + 20 * MINUTE]);
  const [after] = await farm.t.query(api.schedules.list, { clientKey: farm.clientKey });
  expect(after.lastJob).toMatchObject({ jobId: jobs[1]._id, status: "pending" });
  expect(after.lastRunAt).toBe(START + 20 * MINUTE);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a time zone moves the ticks: 09:00 in Europe/Paris is 08:00 UTC in winter", async () => {
  const farm = await newFarm();
  const { nextRunAt } = await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "morning", cron: "0 9 * * *", timezone: "Europe/Paris", job: { type: "j1" } });
  expect(nextRunAt).toBe(Date.UTC(2030, 0, 1, 8, 0, 0));
});

test("overlap skip: a tick is skipped while the last run's job has not ended; allow submits anyway", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "skip", cron: "* * * * *", job: { type: "j1" } });
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "allow", cron: "* * * * *", overlap: "allow", job: { type: "j2" } });
  await advance(farm, MINUTE);
  await advance(farm, MINUTE);
  let jobs = await jobsOf(farm);
  expect(jobs.filter((j) => j.type === "j1")).toHaveLength(1);
  expect(jobs.filter((j) => j.type === "j2")).toHaveLength(2);
  const skip = (await farm.t.query(api.schedules.list, { clientKey: farm.clientKey })).find((s) => s.name === "skip")!;
  expect(skip.lastSkippedAt).toBe(START + 2 * MINUTE);
  // the skip schedule's job ends: its next tick submits again
  const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 4 });
  for (const c of claimed) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: null });
  await advance(farm, MINUTE);
  jobs = await jobsOf(farm);
  expect(jobs.filter((j) => j.type === "j1")).toHaveLength(2);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("ticks missed while the deployment was down run once, then the line goes on from now", async () => {
  const farm = await newFarm();
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "m", cron: "* * * * *", overlap: "allow", job: { type: "j1" } });
  // the deployment is down for an hour: the clock moves on, nothing runs; back up, the scheduler runs the due
  // tick (late) once, and the re-armed line goes on from now
  const before = await farm.t.run(async (ctx) => (await ctx.db.query("schedules").first())!);
  vi.setSystemTime(START + 60 * MINUTE + 30_000);
  await farm.t.mutation(internal.schedules.tick, { scheduleId: before._id, at: before.nextRunAt! });
  // the same tick delivered again (its scheduled function) changes nothing
  await farm.t.mutation(internal.schedules.tick, { scheduleId: before._id, at: before.nextRunAt! });
  expect(await jobsOf(farm)).toHaveLength(1);
  const [listed] = await farm.t.query(api.schedules.list, { clientKey: farm.clientKey });
  expect(listed.nextRuns[0]).toBe(START + 61 * MINUTE);
  // a lost tick (its scheduled function never ran) is caught up by the cron, once
  await farm.t.run(async (ctx) => {
    const s = (await ctx.db.query("schedules").first())!;
    await ctx.scheduler.cancel(s.tick!);
  });
  vi.setSystemTime(START + 120 * MINUTE);
  await farm.t.mutation(internal.schedules.catchUp, {});
  await farm.t.mutation(internal.schedules.catchUp, {});
  expect(await jobsOf(farm)).toHaveLength(2);
});

test("pause stops the ticks, resume starts again from now, remove deletes; another org cannot see or touch it", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "p", cron: "* * * * *", overlap: "allow", job: { type: "j1" } });
  expect(await farm.t.mutation(api.schedules.pause, { clientKey: farm.clientKey, name: "p" })).toEqual({ paused: true });
  await advance(farm, 5 * MINUTE);
  expect(await jobsOf(farm)).toHaveLength(0);
  expect((await farm.t.query(api.schedules.list, { clientKey: farm.clientKey }))[0]).toMatchObject({ paused: true, nextRuns: [] });
  await expectCode(farm.t.mutation(api.schedules.pause, { clientKey: other.clientKey, name: "p" }), "not_found");
  expect(await farm.t.query(api.schedules.list, { clientKey: other.clientKey })).toEqual([]);
  expect(await farm.t.mutation(api.schedules.resume, { clientKey: farm.clientKey, name: "p" })).toEqual({ paused: false, nextRunAt: START + 6 * MINUTE });
  await advance(farm, MINUTE);
  expect(await jobsOf(farm)).toHaveLength(1);
  expect(await farm.t.mutation(api.schedules.remove, { clientKey: farm.clientKey, name: "p" })).toEqual({ removed: true });
  await advance(farm, 5 * MINUTE);
  expect(await jobsOf(farm)).toHaveLength(1);
  expect(await farm.t.query(api.schedules.list, { clientKey: farm.clientKey })).toEqual([]);
});

test("an operator key manages schedules too", async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  await farm.t.mutation(api.schedules.create, { clientKey: key, name: "ops", cron: "0 * * * *", job: { type: "j1" } });
  expect((await farm.t.query(api.schedules.list, { clientKey: farm.clientKey })).map((s) => s.name)).toEqual(["ops"]);
});

test("bad input: cron fields, time zone, duplicate name, externalId, bad job, bad key", async () => {
  const farm = await newFarm();
  const create = (fields: Record<string, unknown>) =>
    farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "s", cron: "* * * * *", job: { type: "j1" }, ...fields });
  await expectCode(create({ cron: "* * * *" }), "invalid_argument");
  await expectCode(create({ cron: "0 * * * * *" }), "invalid_argument");
  await expectCode(create({ cron: "61 * * * *" }), "invalid_argument");
  await expectCode(create({ timezone: "Mars/Olympus" }), "invalid_argument");
  await expectCode(create({ job: { type: "j1", externalId: "once" } }), "invalid_argument");
  await expectCode(create({ job: { type: "NOT A TYPE" } }), "invalid_argument");
  await expectCode(farm.t.mutation(api.schedules.create, { clientKey: "fh_c_nope", name: "s", cron: "* * * * *", job: { type: "j1" } }), "bad_key");
  await create({});
  await expectCode(create({}), "invalid_argument");
  await expectCode(farm.t.mutation(api.schedules.resume, { clientKey: farm.clientKey, name: "missing" }), "not_found");
  expect(await farm.t.run(async (ctx) => (await ctx.db.query("schedules").collect()).length)).toBe(1);
});
