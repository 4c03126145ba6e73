import { describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { addCredit, DAY_MS } from "../../convex/trust/credit";
import { LIMITS } from "../../convex/core/limits";
import { enrollWorker, newFarm, refreshSummaries, type Farm, TEST_TYPES } from "./setup";
import { consistent, useReplicationClock } from "./validationDonors";

useReplicationClock();

// Figures a donor or an operator reads are exact at any size, or say "more" where they list.

describe("pending credit", () => {
  test("is exact beyond 500 results waiting for their quorum, and shrinks as they are judged", async () => {
    const farm = await newFarm();
    const a = await enrollWorker(farm, { name: "a", maxConcurrentJobs: LIMITS.maxConcurrentJobs });
    const waiting = 501;
    const ids: Array<Id<"jobs">> = [];
    // each batch outranks the last, so a's claims meet its new jobs first, not the ones it already ran
    for (let priority = 0; ids.length < waiting; priority++) {
      const jobs = Array.from({ length: Math.min(LIMITS.claimMax, waiting - ids.length) }, () => ({ type: "x", priority, validation: { quorum: 2 } }));
      await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs });
      const leases = await farm.t.mutation(api.workers.claim, { apiKey: a.apiKey, capabilities: a.capabilities, max: jobs.length });
      expect(leases).toHaveLength(jobs.length);
      vi.advanceTimersByTime(1_000);
      for (const lease of leases) {
        await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: lease.leaseId, result: 1, cpuMs: 1_000 });
        ids.push(lease.jobId);
      }
    }
    const pending = async () => (await farm.t.query(api.workers.myCredit, { apiKey: a.apiKey })).pending;
    expect(await pending()).toEqual({ jobs: waiting, cpuHours: (waiting * 1_000) / 3_600_000 });
    await consistent(farm);
    // another machine agrees on one of them: it is judged, and leaves the sum
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 1 });
    const b = await farm.t.mutation(api.workers.enroll, { token, name: "b", machineId: "m-b", capabilities: TEST_TYPES });
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: b.apiKey, capabilities: TEST_TYPES });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lease.leaseId, result: 1 })).toEqual({ status: "succeeded" });
    expect(await pending()).toEqual({ jobs: waiting - 1, cpuHours: ((waiting - 1) * 1_000) / 3_600_000 });
    await consistent(farm);
  }, 120_000);
});

/** `count` workers of the farm, each enrolled through the public API. */
async function workers(farm: Farm, count: number) {
  const list = [];
  for (let i = 0; i < count; i++) {
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES });
    list.push(await farm.t.mutation(api.workers.enroll, { token, name: `w${i}`, machineId: `m${i}`, capabilities: TEST_TYPES }));
  }
  return list;
}

describe("weekly credit", () => {
  test(`is exact beyond ${LIMITS.workersListed} workers: the week's leaderboard and each donor's week in farm:overview`, async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const all = await workers(farm, LIMITS.workersListed + 1);
    const monday = Date.UTC(2026, 10, 16);
    // every worker gives 1 s of CPU each day of the week; the last one gives a minute on Sunday, as the last
    for (let day = 0; day < 7; day++) {
      vi.setSystemTime(monday + day * DAY_MS + 3_600_000);
      await farm.t.run(async (ctx) => {
        for (const [i, w] of all.entries()) {
          const sunday = day === 6 && i === all.length - 1;
          await addCredit(ctx, { _id: w.workerId, orgId: farm.orgId }, { cpuMs: sunday ? 60_000 : 1_000, measured: true }, "completed", Date.now());
        }
      });
    }
    const last = all[all.length - 1];
    const board = await farm.t.query(api.console.leaderboard, { apiKey: op.apiKey, weekOf: monday });
    expect(board.week[0]).toMatchObject({ workerId: last.workerId, cpuMs: 6_000 + 60_000, jobs: 7 });
    expect(board.week).toHaveLength(50);
    expect(board.week.slice(1).every((r) => r.cpuMs === 7_000)).toBe(true);
    await refreshSummaries(farm.t);
    const overview = await farm.t.query(api.farm.overview, { apiKey: last.apiKey });
    expect(overview.credit.days.reduce((s, d) => s + d.cpuHours, 0)).toBeCloseTo(66_000 / 3_600_000, 12);
    expect(overview.credit.days).toHaveLength(7);
    const first = await farm.t.query(api.farm.overview, { apiKey: all[0].apiKey });
    expect(first.credit.days.reduce((s, d) => s + d.jobs, 0)).toBe(7);
    await consistent(farm);
  }, 120_000);
});

describe("the console's lowest streak", () => {
  test("is exact beyond 50 job types, and says there are more", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const types = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    // streaks seeded as adaptive replication leaves them: every type trusted but the last by name, which failed
    await farm.t.run(async (ctx) => {
      for (const type of types) {
        const streak = type === "t59" ? 0 : 20 + types.indexOf(type);
        await ctx.db.insert("trustStreaks", { orgId: farm.orgId, workerId: op.workerId, type, streak, valid: streak, invalid: streak === 0 ? 1 : 0 });
      }
    });
    const { page } = await farm.t.query(api.console.workers, { apiKey: op.apiKey });
    const trust = page.find((w) => w.workerId === op.workerId)!.trust;
    expect(trust.streaks.map((s) => [s.type, s.streak])).toEqual([["t59", 0], ...types.slice(0, 9).map((t, i) => [t, 20 + i])]);
    expect(trust.moreStreaks).toBe(true);
    const mine = (await farm.t.query(api.workers.myCredit, { apiKey: op.apiKey })).trust;
    expect(mine.streaks).toHaveLength(50);
    expect(mine.moreStreaks).toBe(true);
  });
});
