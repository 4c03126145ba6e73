import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LIMITS } from "../../convex/core/limits";
import { runDue } from "./queueState";
import { newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * A new lane learns about every worker already waiting, in pages of LIMITS.laneBackfill: waiters that began waiting
 * in the same millisecond (a fleet started together) are each enrolled once, none skipped, and the pages stop.
 */

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 29, 12));
});
afterEach(() => vi.useRealTimers());

const TYPE = "backfill.job";

async function waitingFleet(farm: Farm, count: number) {
  const workers = [];
  for (let i = 0; i < count; i++) {
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [TYPE], maxConcurrentJobs: 1 });
    const worker = await farm.t.mutation(api.workers.enroll, { token, name: `w${i}`, machineId: `m-${i}`, capabilities: [TYPE] });
    await farm.t.mutation(api.workers.ready, { apiKey: worker.apiKey, capabilities: [TYPE], slots: 1 });
    workers.push(worker);
  }
  return workers;
}

test("three and a half pages of waiters that all began in the same millisecond: each joins the new lane once", async () => {
  const farm = await newFarm();
  const count = Math.floor(3.5 * LIMITS.laneBackfill);
  await waitingFleet(farm, count);
  // the whole fleet began waiting in one millisecond
  await farm.t.run(async (ctx) => {
    for (const waiter of await ctx.db.query("waiters").collect()) if (waiter.since !== undefined) await ctx.db.patch(waiter._id, { since: Date.now() - 1000 });
  });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: TYPE, payload: {} });
  await runDue(farm.t, 10);
  const lanes = await farm.t.run(async (ctx) => await ctx.db.query("lanes").collect());
  const lane = lanes.find((l) => l.capabilities.includes(TYPE))!;
  const joined = await farm.t.run(async (ctx) => await ctx.db.query("laneWaiters").withIndex("by_lane_since", (q) => q.eq("laneId", lane._id)).collect());
  const workersJoined = new Set(joined.map((row) => row.workerId));
  // one of them may have taken the job since (its waiting line row gone with its offer)
  expect(workersJoined.size).toBeGreaterThanOrEqual(count - 1);
  expect(joined).toHaveLength(workersJoined.size);
  expect(await checkConsistency(farm.t)).toEqual([]);
});
