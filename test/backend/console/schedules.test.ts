import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { CONSOLE_SCHEDULES_SHOWN } from "../../../convex/pipelines/schedules";
import { checkConsistency } from "../sweep/consistency";
import { enrollWorker, expectCode, newFarm, type Farm } from "../setup";

// Tue 2030-01-01 00:00:00 UTC
const START = Date.UTC(2030, 0, 1, 0, 0, 0);
const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

async function operatorKey(farm: Farm, name = "alice") {
  return (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name })).key;
}

test("consoleSchedules:list shows the org's schedules with next runs and the last run's job; pause, resume and remove by id", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  const apiKey = await operatorKey(farm);
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "hourly", cron: "0 * * * *", job: { type: "j1" } });
  await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "tenth", cron: "*/10 * * * *", timezone: "Europe/Paris", overlap: "allow", job: { type: "j2" } });
  await other.t.mutation(api.schedules.create, { clientKey: other.clientKey, name: "theirs", cron: "* * * * *", job: { type: "j1" } });

  vi.advanceTimersByTime(10 * MINUTE);
  await farm.t.finishInProgressScheduledFunctions();
  const { schedules, more } = await farm.t.query(api.consoleSchedules.list, { apiKey });
  expect(more).toBe(false);
  expect(schedules.map((s) => s.name)).toEqual(["hourly", "tenth"]);
  const [hourly, tenth] = schedules;
  expect(hourly).toMatchObject({ cron: "0 * * * *", timezone: "UTC", overlap: "skip", paused: false, lastJob: null, lastRunAt: null });
  expect(hourly.nextRuns).toEqual([START + 60 * MINUTE, START + 120 * MINUTE, START + 180 * MINUTE]);
  expect(tenth.nextRuns).toEqual([START + 20 * MINUTE, START + 30 * MINUTE, START + 40 * MINUTE]);
  expect(tenth.lastRunAt).toBe(START + 10 * MINUTE);
  expect(tenth.lastJob).toMatchObject({ status: "pending" });

  // pause: no next runs; the armed tick does nothing
  expect(await farm.t.mutation(api.consoleSchedules.pause, { apiKey, scheduleId: tenth.scheduleId })).toEqual({ paused: true });
  const paused = (await farm.t.query(api.consoleSchedules.list, { apiKey })).schedules[1];
  expect(paused).toMatchObject({ paused: true, nextRuns: [] });
  vi.advanceTimersByTime(10 * MINUTE);
  await farm.t.finishInProgressScheduledFunctions();
  expect((await farm.t.query(api.consoleSchedules.list, { apiKey })).schedules[1].lastRunAt).toBe(START + 10 * MINUTE);
  // resume from now
  expect(await farm.t.mutation(api.consoleSchedules.resume, { apiKey, scheduleId: tenth.scheduleId })).toEqual({ paused: false, nextRunAt: START + 30 * MINUTE });
  // remove: gone from the list; the job it submitted stays
  expect(await farm.t.mutation(api.consoleSchedules.remove, { apiKey, scheduleId: tenth.scheduleId })).toEqual({ removed: true });
  expect((await farm.t.query(api.consoleSchedules.list, { apiKey })).schedules.map((s) => s.name)).toEqual(["hourly"]);
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: tenth.lastJob!.jobId })).toMatchObject({ status: "pending" });
  await expectCode(farm.t.mutation(api.consoleSchedules.pause, { apiKey, scheduleId: tenth.scheduleId }), "not_found");

  // another org's schedule is unknown here, and malformed ids are not_found too
  const theirs = (await other.t.query(api.consoleSchedules.list, { apiKey: await operatorKey(other, "bob") })).schedules[0];
  for (const scheduleId of [theirs.scheduleId, "nope", ""]) {
    await expectCode(farm.t.mutation(api.consoleSchedules.pause, { apiKey, scheduleId }), "not_found");
    await expectCode(farm.t.mutation(api.consoleSchedules.remove, { apiKey, scheduleId }), "not_found");
  }
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("consoleSchedules:* need an operator key: a client key, a worker's key, an unknown or a revoked key are refused", async () => {
  const farm = await newFarm();
  const apiKey = await operatorKey(farm);
  const { scheduleId } = await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name: "n", cron: "* * * * *", job: { type: "j1" } });
  const worker = await enrollWorker(farm);
  const manager = await enrollWorker(farm, { canManage: true, name: "op" });
  const calls = (key: string): Array<() => Promise<unknown>> => [
    () => farm.t.query(api.consoleSchedules.list, { apiKey: key }),
    () => farm.t.mutation(api.consoleSchedules.pause, { apiKey: key, scheduleId }),
    () => farm.t.mutation(api.consoleSchedules.resume, { apiKey: key, scheduleId }),
    () => farm.t.mutation(api.consoleSchedules.remove, { apiKey: key, scheduleId }),
  ];
  for (const call of calls(farm.clientKey)) await expectCode(call(), "bad_key");
  for (const call of calls(worker.apiKey)) await expectCode(call(), "forbidden");
  for (const call of calls(`fh_o_${"A".repeat(43)}`)) await expectCode(call(), "bad_key");
  // a worker that may manage is an operator to the console, as on every console page
  expect((await farm.t.query(api.consoleSchedules.list, { apiKey: manager.apiKey })).schedules).toHaveLength(1);
  const { operatorKeyId } = await farm.t.run(async (ctx) => ({ operatorKeyId: (await ctx.db.query("operatorKeys").first())!._id }));
  const { key: second } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "second" });
  await farm.t.mutation(api.consoleAccess.revokeOperatorKey, { apiKey: second, operatorKeyId });
  for (const call of calls(apiKey)) await expectCode(call(), "revoked");
  expect(await farm.t.run(async (ctx) => (await ctx.db.get(scheduleId))?.paused)).toBe(false);
});

test("consoleSchedules:list is bounded: the first schedules by name, and `more` when there are others", async () => {
  const farm = await newFarm();
  const apiKey = await operatorKey(farm);
  const names = Array.from({ length: CONSOLE_SCHEDULES_SHOWN + 1 }, (_, i) => `s${String(i).padStart(3, "0")}`);
  for (const name of names) await farm.t.mutation(api.schedules.create, { clientKey: farm.clientKey, name, cron: "0 0 * * *", job: { type: "j1" } });
  const answer = await farm.t.query(api.consoleSchedules.list, { apiKey });
  expect(answer.more).toBe(true);
  expect(answer.schedules.map((s) => s.name)).toEqual(names.slice(0, CONSOLE_SCHEDULES_SHOWN));
  await farm.t.mutation(api.consoleSchedules.remove, { apiKey, scheduleId: answer.schedules[0].scheduleId });
  const after = await farm.t.query(api.consoleSchedules.list, { apiKey });
  expect(after.more).toBe(false);
  expect(after.schedules).toHaveLength(CONSOLE_SCHEDULES_SHOWN);
});
