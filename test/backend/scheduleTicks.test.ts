import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { expectCode, newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * Schedules stop with their key and say why; a tick that cannot submit records why and leaves nothing behind (its
 * submit is a sub-transaction); a schedule's job spec lives beside its row; DST days tick once.
 */

const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2030, 0, 1));
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

async function advance(farm: Farm, ms: number) {
  vi.advanceTimersByTime(ms);
  await farm.t.finishInProgressScheduledFunctions();
}

const scheduledJobs = (farm: Farm) => farm.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).filter((j) => j.scheduleId !== undefined));
const listed = async (farm: Farm, name: string) => (await farm.t.query(api.schedules.list, { clientKey: farm.clientKey })).find((s) => s.name === name)!;

test("revoking a client key pauses its schedules, saying why; they cannot be resumed; an operator's schedule runs on", async () => {
  const farm = await newFarm();
  const { key: opKey } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  const second = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "nightly-key" });
  for (const name of ["a", "b"]) await farm.t.mutation(api.schedules.create, { clientKey: second.key, name, cron: "* * * * *", overlap: "allow", job: { type: "j1" } });
  await farm.t.mutation(api.schedules.create, { clientKey: opKey, name: "ops", cron: "* * * * *", overlap: "allow", job: { type: "j2" } });
  expect(await farm.t.mutation(internal.admin.revokeClientKey, { clientKeyId: second.clientKeyId })).toEqual({ schedulesPaused: 2 });
  const a = await listed(farm, "a");
  expect(a).toMatchObject({ paused: true, nextRuns: [] });
  expect(a.pausedReason).toContain("nightly-key");
  expect(a.pausedReason).toContain("revoked");
  for (let i = 0; i < 3; i++) await advance(farm, MINUTE);
  expect((await scheduledJobs(farm)).map((j) => j.type)).toEqual(["j2", "j2", "j2"]);
  await expectCode(farm.t.mutation(api.schedules.resume, { clientKey: opKey, name: "a" }), "invalid_argument");
  expect((await farm.t.query(api.consoleSchedules.list, { apiKey: opKey })).schedules.find((s) => s.name === "b")!.pausedReason).toContain("revoked");
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("the console's revoke pauses them too; a tick whose key was revoked without that (an older version) pauses itself", async () => {
  const farm = await newFarm();
  const { key: opKey } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  const viaConsole = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "c1" });
  const old = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "c2" });
  await farm.t.mutation(api.schedules.create, { clientKey: viaConsole.key, name: "c1", cron: "* * * * *", job: { type: "j1" } });
  await farm.t.mutation(api.schedules.create, { clientKey: old.key, name: "c2", cron: "* * * * *", job: { type: "j1" } });
  expect(await farm.t.mutation(api.consoleAccess.revokeClientKey, { apiKey: opKey, clientKeyId: viaConsole.clientKeyId })).toEqual({ schedulesPaused: 1 });
  await farm.t.run(async (ctx) => await ctx.db.patch(old.clientKeyId, { revoked: true }));
  await advance(farm, MINUTE);
  expect(await scheduledJobs(farm)).toEqual([]);
  expect(await listed(farm, "c2")).toMatchObject({ paused: true, lastRunAt: null });
  expect((await listed(farm, "c2")).pausedReason).toContain("c2");
});

test("a tick that cannot submit records lastError and lastErrorAt and rolls back what its submit wrote; the next good tick clears them", async () => {
  const farm = await newFarm();
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "nightly" }], seal: true });
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "n", cron: "* * * * *", overlap: "allow", job: { type: "j3", batchId: "nightly", payload: { big: "x".repeat(1000) } } });
  const before = await farm.t.run(async (ctx) => ({ jobs: (await ctx.db.query("jobs").collect()).length, bodies: (await ctx.db.query("jobBodies").collect()).length, lanes: (await ctx.db.query("lanes").collect()).length }));
  await advance(farm, MINUTE);
  // the sealed batch refused the job after its row, payload and lane were written: all rolled back
  const after = await farm.t.run(async (ctx) => ({ jobs: (await ctx.db.query("jobs").collect()).length, bodies: (await ctx.db.query("jobBodies").collect()).length, lanes: (await ctx.db.query("lanes").collect()).length }));
  expect(after).toEqual(before);
  const failed = await listed(farm, "n");
  expect(failed).toMatchObject({ lastErrorCode: "invalid_argument", lastErrorAt: Date.UTC(2030, 0, 1, 0, 1), lastRunAt: Date.UTC(2030, 0, 1, 0, 1), lastJob: null, paused: false });
  expect(failed.lastError).toContain("sealed");
  expect(failed.nextRuns[0]).toBe(Date.UTC(2030, 0, 1, 0, 2));
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the batch is gone from the spec's way: the next tick submits, and the error is cleared
  await farm.t.run(async (ctx) => {
    for (const seal of await ctx.db.query("batchSeals").collect()) await ctx.db.delete(seal._id);
  });
  await advance(farm, MINUTE);
  expect(await listed(farm, "n")).toMatchObject({ lastError: null, lastErrorCode: null, lastErrorAt: null });
  expect(await scheduledJobs(farm)).toHaveLength(1);
});

test("a schedule's job spec lives beside its row (removed with it); rows of the old shape are moved by migrations:moveScheduleBodies", async () => {
  const farm = await newFarm();
  const { scheduleId } = await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "s", cron: "* * * * *", job: { type: "j1", payload: { n: 1 } } });
  const rows = await farm.t.run(async (ctx) => ({ row: (await ctx.db.get(scheduleId))!, bodies: await ctx.db.query("scheduleBodies").collect() }));
  expect(rows.row.job).toBeUndefined();
  expect(rows.row).toMatchObject({ type: "j1", jobBytes: expect.any(Number) as unknown });
  expect(rows.bodies).toMatchObject([{ scheduleId, job: { type: "j1", payload: { n: 1 } } }]);
  await farm.t.mutation(api.schedules.remove, { clientKey: farm.clientKey, name: "s" });
  expect(await farm.t.run(async (ctx) => await ctx.db.query("scheduleBodies").collect())).toEqual([]);

  // an old row: its spec on the row, no body beside it; it ticks as before, and the migration moves it
  const oldId = await farm.t.run(async (ctx) =>
    ctx.db.insert("schedules", { orgId: farm.orgId, name: "old", cron: "* * * * *", timezone: "UTC", overlap: "allow", job: { type: "j2", payload: { n: 2 } }, paused: false, createdAt: Date.now() }),
  );
  await farm.t.mutation(internal.schedules.tick, { scheduleId: oldId, at: 0 }); // not armed: does nothing
  await farm.t.run(async (ctx) => await ctx.db.patch(oldId, { nextRunAt: Date.now() }));
  await farm.t.mutation(internal.schedules.tick, { scheduleId: oldId, at: Date.now() });
  expect((await scheduledJobs(farm)).map((j) => j.type)).toEqual(["j2"]);
  expect((await listed(farm, "old")).type).toBe("j2");
  expect(await farm.t.mutation(internal.migrations.moveScheduleBodies, {})).toMatchObject({ moved: 1, done: true });
  const moved = await farm.t.run(async (ctx) => (await ctx.db.get(oldId))!);
  expect(moved.job).toBeUndefined();
  expect(moved.type).toBe("j2");
  await advance(farm, MINUTE);
  expect((await scheduledJobs(farm)).map((j) => j.type)).toEqual(["j2", "j2"]);
});

/** The ticks of `30 2 * * *` in Europe/Paris from `from` (UTC ISO) over three days, as the schedule runs them. */
async function parisTicks(from: string): Promise<string[]> {
  vi.setSystemTime(new Date(from));
  const farm = await newFarm();
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "dst", cron: "30 2 * * *", timezone: "Europe/Paris", overlap: "allow", job: { type: "j1" } });
  for (let i = 0; i < 3 * 24 * 4; i++) await advance(farm, 15 * MINUTE);
  return (await scheduledJobs(farm)).map((j) => new Date(Math.floor(j._creationTime / MINUTE) * MINUTE).toISOString());
}

test("DST, spring: on 2026-03-29 02:30 does not exist in Europe/Paris; the tick runs once, an hour later (03:30 CEST)", async () => {
  expect(await parisTicks("2026-03-28T12:00:00Z")).toEqual(["2026-03-29T01:30:00.000Z", "2026-03-30T00:30:00.000Z", "2026-03-31T00:30:00.000Z"]);
}, 120_000);

test("DST, autumn: on 2026-10-25 02:30 happens twice in Europe/Paris; the tick runs once (02:30 CET)", async () => {
  expect(await parisTicks("2026-10-24T12:00:00Z")).toEqual(["2026-10-25T01:30:00.000Z", "2026-10-26T01:30:00.000Z", "2026-10-27T01:30:00.000Z"]);
}, 120_000);

test("schedules of the old shape with 256 KiB specs on their rows: every read stays within its budget until the migration moves them", async () => {
  const farm = await newFarm();
  const payload = "x".repeat(250 * 1024);
  await farm.t.run(async (ctx) => {
    for (let i = 0; i < 30; i++) {
      const job = { type: "j1", payload };
      await ctx.db.insert("schedules", { orgId: farm.orgId, name: `old${i}`, cron: "0 0 1 1 *", timezone: "UTC", overlap: "allow", job, paused: false, createdAt: Date.now() });
    }
  });
  // the list stops at its byte budget instead of failing; a create cannot count them and says what to do
  const listed = await farm.t.query(api.schedules.list, { clientKey: farm.clientKey });
  expect(listed.length).toBeGreaterThan(0);
  expect(listed.length).toBeLessThan(30);
  await expectCode(farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "new", cron: "* * * * *", job: { type: "j1" } }), "too_large");
  // the migration moves them a byte-budgeted batch at a time
  await farm.t.mutation(internal.migrations.moveScheduleBodies, {});
  for (let i = 0; i < 20; i++) {
    vi.advanceTimersByTime(0);
    await farm.t.finishInProgressScheduledFunctions();
  }
  expect(await farm.t.query(api.schedules.list, { clientKey: farm.clientKey })).toHaveLength(30);
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "new", cron: "* * * * *", job: { type: "j1" } });
}, 120_000);
