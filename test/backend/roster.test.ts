import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { LIMITS } from "../../convex/core/limits";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, runningJobs, newFarm, refreshSummaries, type Farm } from "./setup";

/**
 * No silent caps on workers: every worker is counted and looked at (online ones first), revoked ones leave the
 * lists at once and the database after the retention age, a machine that joins again replaces its old row,
 * and what only grows is pruned or bounded.
 */

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 24 * 60 * 60_000;

/** `n` workers written straight into the database, each with `caps` capabilities and a presence row (1 s apart, newest last). */
async function seedWorkers(farm: Farm, n: number, caps: (i: number) => string[]) {
  const now = Date.now();
  for (let from = 0; from < n; from += 500) {
    await farm.t.run(async (ctx) => {
      for (let i = from; i < Math.min(n, from + 500); i++) {
        const capabilities = caps(i);
        const workerId = await ctx.db.insert("workers", {
          orgId: farm.orgId,
          name: `w${i}`,
          machineId: `m${i}`,
          allowedCapabilities: capabilities,
          advertisedCapabilities: capabilities,
          maxConcurrentJobs: 4,
          canManage: false,
          keyHash: `h${i}`,
          keyPrefix: `fh_w_${i}`,
          revoked: false,
        });
        await ctx.db.insert("presence", { orgId: farm.orgId, workerId, lastSeenAt: now - (n - i) * 10 });
      }
    });
  }
}

const submit = (farm: Farm, requiredCapabilities: string[]) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities });

describe("the summary at 10,000 workers with 256 capabilities each", () => {
  test("counts every worker, lists the first 200 online first, stays far below 1 MiB, and never calls a lane unservable it could not check", async () => {
    const farm = await newFarm();
    // every worker handles the jobs' type "x" (a job's type routes it); only the first also offers "rare"
    const caps = (i: number) =>
      Array.from({ length: LIMITS.capabilitiesPerWorker }, (_, k) => (k === 0 && i === 0 ? "rare" : k === 1 ? "x" : `cap-${String(k).padStart(3, "0")}`));
    await seedWorkers(farm, 10_000, caps);
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    await submit(farm, ["cap-007"]); // every worker can
    await submit(farm, ["rare"]); // only the least recently seen one: past the summariser's read budget
    await refreshSummaries(farm.t); // transaction limits on: it must fit
    const summary = (await farm.t.run(async (ctx) => await ctx.db.query("summaries").first()))!;
    const bytes = JSON.stringify(summary).length;
    expect(bytes).toBeLessThan(128 * 1024);
    expect(summary.workerCounts).toEqual({ total: 10_001, online: 10_001 });
    expect(summary.workers).toHaveLength(LIMITS.workersListed);
    expect(summary.workers[0].name).toBe("op"); // most recently seen first
    const lanes = Object.fromEntries(summary.lanes.map((l) => [l.routingKey, l.servable]));
    expect(lanes).toEqual({ "cap-007,x": true, "rare,x": undefined });
    const o = await farm.t.query(api.farm.overview, { apiKey: op.apiKey });
    expect(o.workersOnline).toBe(10_001);
    // the console counts every worker; "online" it derives from onlineUntil (no clock in the query), given for the listed ones
    const consoleOverview = await farm.t.query(api.console.overview, { apiKey: op.apiKey });
    expect(consoleOverview.workers).toBe(10_001);
    expect(consoleOverview.onlineUntil).toHaveLength(LIMITS.workersListed);
    expect(consoleOverview.onlineUntil.every((until) => until > Date.now())).toBe(true);
    // …and the rest it counted online, so the console's figure is every online worker, not the first 200
    expect(consoleOverview.onlineUntil.length + consoleOverview.onlineUnlisted).toBe(10_001);
    // the console pages through all of them, most recently seen first
    const first = await farm.t.query(api.console.workers, { apiKey: op.apiKey, paginationOpts: { numItems: 100, cursor: null } });
    const second = await farm.t.query(api.console.workers, { apiKey: op.apiKey, paginationOpts: { numItems: 100, cursor: first.continueCursor } });
    expect(first.page.map((w) => w.name).slice(0, 3)).toEqual(["op", "w9999", "w9998"]);
    expect(second.page.map((w) => w.name).slice(0, 2)).toEqual(["w9900", "w9899"]);
    expect(second.isDone).toBe(false);
    expect(second.page[0].advertisedCapabilities).toHaveLength(LIMITS.capabilitiesPerWorker);
  }, 300_000);
});

describe("lanes no online worker can run", () => {
  test("are known for certain once every worker was looked at: offline and revoked workers do not serve", async () => {
    const farm = await newFarm();
    const gpu = await enrollWorker(farm, { name: "gpu", capabilities: ["gpu"] });
    const cpu = await enrollWorker(farm, { name: "cpu", capabilities: ["cpu"] });
    await submit(farm, ["gpu"]);
    await submit(farm, ["cpu"]);
    await submit(farm, ["tpu"]);
    const lanes = async () => {
      await refreshSummaries(farm.t);
      const o = await farm.t.query(api.farm.overview, { apiKey: cpu.apiKey });
      return { servable: Object.fromEntries(o.lanes.map((l) => [l.routingKey, l.servable])), workers: o.workers.map((w) => w.name).sort() };
    };
    expect(await lanes()).toEqual({ servable: { "gpu,x": true, "cpu,x": true, "tpu,x": false }, workers: ["cpu", "gpu"] });
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: gpu.workerId });
    expect(await lanes()).toEqual({ servable: { "gpu,x": false, "cpu,x": true, "tpu,x": false }, workers: ["cpu"] });
  });
});

describe("a machine that leaves and joins again", () => {
  test("does not pile up rows: its new worker replaces the revoked one and keeps its credit", async () => {
    const farm = await newFarm();
    const other = await enrollWorker(farm, { name: "other" }); // same machineId as the test helper gives everyone, but not revoked
    let w = await enrollWorker(farm, { name: "laptop" });
    for (let round = 0; round < 5; round++) {
      await submit(farm, []);
      const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
      vi.advanceTimersByTime(1_000);
      await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, cpuMs: 500 });
      await farm.t.mutation(api.workers.leave, { apiKey: w.apiKey });
      w = await enrollWorker(farm, { name: "laptop" });
    }
    const rows = await farm.t.run(async (ctx) => ({
      workers: (await ctx.db.query("workers").collect()).map((x) => x.name).sort(),
      presence: (await ctx.db.query("presence").collect()).length,
      totals: await ctx.db.query("creditTotals").collect(),
      days: await ctx.db.query("creditDays").collect(),
      weeks: await ctx.db.query("creditWeeks").collect(),
    }));
    expect(rows.workers).toEqual(["laptop", "other"]);
    expect(rows.presence).toBe(2);
    expect(rows.totals.map((t) => [t.workerId, t.jobs, t.cpuMs])).toEqual([[w.workerId, 5, 2_500]]);
    expect(new Set(rows.days.map((d) => d.workerId))).toEqual(new Set([w.workerId]));
    expect(rows.weeks.map((x) => [x.workerId, x.jobs, x.cpuMs])).toEqual([[w.workerId, 5, 2_500]]);
    expect(await farm.t.query(api.workers.myCredit, { apiKey: w.apiKey })).toMatchObject({ allTime: { jobs: 5 } });
    expect((await runningJobs(farm.t, other.apiKey)).length).toBe(0);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("retention prunes what would only grow", () => {
  test("revoked workers (with their rows), finished bulk operations, old enrollment tokens and credit days past the age; the rest stays", async () => {
    vi.setSystemTime(Date.UTC(2026, 0, 1));
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const gone = await enrollWorker(farm, { name: "gone" });
    // another machine than the workers enrolled below (a machine joining again replaces its revoked worker)
    await farm.t.run(async (ctx) => await ctx.db.patch(gone.workerId, { machineId: "elsewhere" }));
    for (const w of [gone, op]) {
      await submit(farm, []);
      const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
      await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, cpuMs: 10 });
    }
    await farm.t.mutation(api.workers.leave, { apiKey: gone.apiKey });
    const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "none" } });
    await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
    await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], maxConcurrentJobs: 1, ttlMs: 60_000 });
    vi.advanceTimersByTime(20 * DAY);
    // younger than the age: a worker revoked now, a bulk operation done now, a token still valid, today's credit
    const recent = await enrollWorker(farm, { name: "recent" });
    await farm.t.mutation(api.workers.leave, { apiKey: recent.apiKey });
    await submit(farm, []);
    const [c2] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: op.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: c2.leaseId, cpuMs: 10 });
    const { bulkId: recentBulk } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "none" } });
    await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
    const tables = () =>
      farm.t.run(async (ctx) => ({
        workers: (await ctx.db.query("workers").collect()).map((w) => w.name).sort(),
        bulkOps: (await ctx.db.query("bulkOps").collect()).map((b) => b._id),
        enrollments: (await ctx.db.query("enrollments").collect()).length,
        creditDays: (await ctx.db.query("creditDays").collect()).map((d) => d.workerId),
        creditWeeks: (await ctx.db.query("creditWeeks").collect()).map((d) => d.workerId),
        creditTotals: (await ctx.db.query("creditTotals").collect()).map((d) => d.workerId),
        waiters: (await ctx.db.query("waiters").collect()).map((d) => d.workerId),
        slots: (await ctx.db.query("workerSlots").collect()).map((d) => d.workerId),
      }));
    const before = await tables();
    expect(before.workers).toEqual(["gone", "op", "recent"]);
    expect(before.enrollments).toBe(4);
    expect(before.slots).toContain(gone.workerId);
    const result = await farm.t.mutation(internal.retention.sweepRecords, { olderThanMs: 7 * DAY });
    // gone's credit days go with it; op's day of 20 days ago by its age
    expect(result).toEqual({ deleted: { workers: 1, bulkOps: 1, enrollments: 3, creditDays: 1, creditWeeks: 1, fairPasses: 0 }, more: false });
    const after = await tables();
    expect(after.workers).toEqual(["op", "recent"]);
    expect(after.bulkOps).toEqual([recentBulk]);
    expect(after.bulkOps).not.toContain(bulkId);
    expect(after.enrollments).toBe(1); // recent's, made 20 days later
    expect(after.creditDays).toEqual([op.workerId]);
    expect(after.creditWeeks).toEqual([op.workerId]);
    const touches = (ids: Id<"workers">[]) => ids.some((id) => id === gone.workerId);
    expect([after.creditTotals, after.waiters, after.slots].map(touches)).toEqual([false, false, false]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("the sweep's chain ends in this pass", async () => {
    const farm = await newFarm();
    await farm.t.mutation(internal.retention.sweep, {});
    await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
    const names = await farm.t.run(async (ctx) => (await ctx.db.system.query("_scheduled_functions").collect()).map((s) => s.name));
    expect(names).toContain("retention:sweepRecords");
  });

  test("purging a job deletes its webhook delivery", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "https://hooks.example.com/hook" });
    const jobId = await submit(farm, []);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
    const deliveries = () => farm.t.run(async (ctx) => (await ctx.db.query("webhookDeliveries").collect()).length);
    expect(await deliveries()).toBe(1);
    expect(await farm.t.mutation(internal.admin.purge, { jobId })).toBe(true);
    expect(await deliveries()).toBe(0);
  });
});

describe("the all-time leaderboard", () => {
  test("is the top of every worker's credit, not the credit of the first 200 workers", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    await seedWorkers(farm, 300, () => []);
    await farm.t.run(async (ctx) => {
      const workers = (await ctx.db.query("workers").collect()).filter((w) => w.name.startsWith("w"));
      for (const [i, w] of workers.entries()) {
        await ctx.db.insert("creditTotals", { orgId: farm.orgId, workerId: w._id, cpuMs: i * 1_000, wallMs: 0, jobs: 1, failed: 0 });
      }
    });
    const board = await farm.t.query(api.console.leaderboard, { apiKey: op.apiKey, weekOf: Date.now() });
    expect(board.allTime.slice(0, 3).map((r) => [r.name, r.cpuMs])).toEqual([["w299", 299_000], ["w298", 298_000], ["w297", 297_000]]);
    expect(board.allTime).toHaveLength(50);
  });
});
