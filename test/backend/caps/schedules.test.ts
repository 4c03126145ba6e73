import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { LIMITS } from "../../../convex/core/limits";
import { fullBody } from "./world";
import { atStep, capsBackend, CAPS_TARGETS, recordPeaks, stopRecording } from "./peaks";
import { newFarm, type Farm } from "../setup";

// Schedules at the caps: 1,000 schedules (10 orgs of LIMITS.schedulesPerOrg) whose jobs carry 256 KiB payloads. Their
// job specs live beside the rows, so every list, tick, catch-up, revoke and remove stays under 8 MiB read / 4 MiB written.

const ORGS = 10;

async function thousandSchedules(): Promise<void> {
  atStep("seed");
  const t = capsBackend();
  const farms: Array<Farm & { opKey: string }> = [];
  for (let o = 0; o < ORGS; o++) {
    const farm = await newFarm(t, `org${o}`);
    const { key } = await t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
    farms.push({ ...farm, opKey: key });
  }
  atStep("create");
  for (const farm of farms) {
    for (let i = 0; i < LIMITS.schedulesPerOrg; i++) {
      await t.mutation(api.schedules.create, {
        clientKey: farm.clientKey,
        name: `s${String(i).padStart(3, "0")}`,
        cron: "0 0 1 1 *",
        job: { type: "j1", payload: fullBody(`${farm.orgId}-${i}`) },
      });
    }
  }
  atStep("lists");
  for (const farm of farms) {
    expect(await t.query(api.schedules.list, { clientKey: farm.clientKey })).toHaveLength(LIMITS.schedulesPerOrg);
    expect((await t.query(api.consoleSchedules.list, { apiKey: farm.opKey })).more).toBe(true);
  }
  // every tick lost (the deployment was down): the catch-up runs them all, a bounded batch per transaction
  atStep("seed");
  await t.run(async (ctx) => {
    for (const s of await ctx.db.query("schedules").collect()) {
      await ctx.scheduler.cancel(s.tick!);
      await ctx.db.patch(s._id, { nextRunAt: Date.now() - 10 * 60_000 });
    }
  });
  atStep("catch-up");
  await t.mutation(internal.schedules.catchUp, {});
  const submitted = async () => {
    atStep("seed");
    const n = (await t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter((j) => j.scheduleId !== undefined).length;
    atStep("catch-up");
    return n;
  };
  // each run schedules the next while overdue schedules are left
  for (let round = 1; round <= 1_000 && (round % 25 !== 0 || (await submitted()) < ORGS * LIMITS.schedulesPerOrg); round++) {
    vi.advanceTimersByTime(0);
    await t.finishInProgressScheduledFunctions();
  }
  expect(await submitted()).toBe(ORGS * LIMITS.schedulesPerOrg);
  atStep("lists after runs");
  for (const farm of farms) expect((await t.query(api.schedules.list, { clientKey: farm.clientKey })).every((s) => s.lastJob !== null)).toBe(true);
  atStep("revoke");
  for (const farm of farms.slice(0, 5)) {
    const [key] = await t.run(async (ctx) => await ctx.db.query("clientKeys").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).collect());
    expect(await t.mutation(internal.admin.revokeClientKey, { clientKeyId: key._id })).toEqual({ schedulesPaused: LIMITS.schedulesPerOrg });
  }
  atStep("remove");
  for (const farm of farms.slice(5)) {
    for (let i = 0; i < 10; i++) await t.mutation(api.schedules.remove, { clientKey: farm.clientKey, name: `s${String(i).padStart(3, "0")}` });
  }
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  stopRecording();
  vi.useRealTimers();
});

// as capsCases does, with more time: a thousand 256 KiB specs take a while to write on a busy machine
test("1,000 schedules with 256 KiB payloads: create, lists, a catch-up of every tick, revokes, removes", async () => {
  const peaks = recordPeaks();
  await thousandSchedules();
  console.log(`read ${peaks.bytesRead.bytes} B (${peaks.bytesRead.step}); wrote ${peaks.bytesWritten.bytes} B (${peaks.bytesWritten.step}); ${peaks.transactions} transactions`);
  expect(peaks.bytesRead.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesRead);
  expect(peaks.bytesWritten.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesWritten);
}, 900_000);
