// Energy given: workers report each attempt's energy (`energyJ` on complete and fail); the farm keeps it beside the
// credit (per worker per day and all time) and per job type (folded by the summariser), and shows it to the donor
// (workers:myCredit, farm:overview) and the operator (console:workers, console:leaderboard, console:energy).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { foldDeltas, FOLD_TYPES } from "../../convex/lanes/counters";
import { ENERGY_J_MAX } from "../../convex/trust/energy";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, expectCode, LAPTOP_FACTS, newFarm, snapshot, type Enrolled, type Farm } from "./setup";
import { donor, instanceLease, submitReplicated } from "./validationDonors";

const MONDAY = Date.UTC(2026, 10, 16);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12)); // a Wednesday
});
afterEach(() => vi.useRealTimers());

/** A job of `type` claimed by the worker, `wallMs` ago: its lease. */
async function ran(farm: Farm, worker: Enrolled, type: string, wallMs: number) {
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
  vi.advanceTimersByTime(wallMs);
  return claim;
}

/** Run the summariser now (it folds the per-type deltas). */
const summarise = (farm: Farm) => farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, all: true });

describe("an attempt's energy", () => {
  test("a completed and a failed attempt add their energy to the worker's day and all time; myCredit and farm:overview show it", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 2, facts: LAPTOP_FACTS });
    const first = await ran(farm, w, "render", 60_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: first.leaseId, result: 1, cpuMs: 50_000, energyJ: 1_250.5 });
    const second = await ran(farm, w, "encode", 60_000);
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: second.leaseId, error: "boom", retryable: false, cpuMs: 10_000, energyJ: 300 });
    const credit = await farm.t.query(api.workers.myCredit, { apiKey: w.apiKey });
    expect(credit.week).toMatchObject({ jobs: 1, failed: 1, energyJ: 1_550.5 });
    expect(credit.allTime).toMatchObject({ jobs: 1, failed: 1, energyJ: 1_550.5 });
    await summarise(farm);
    const overview = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    expect(overview.credit?.days).toEqual([expect.objectContaining({ energyJ: 1_550.5, jobs: 1 })]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("is clamped to what the machine's cores could draw over the attempt's wall time (60 W a core)", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { maxConcurrentJobs: 1, facts: LAPTOP_FACTS }); // 8 cores
    const claim = await ran(farm, w, "render", 1_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, cpuMs: 1_000, energyJ: 1e9 });
    expect((await farm.t.query(api.workers.myCredit, { apiKey: w.apiKey })).week.energyJ).toBe(8 * 60);
  });

  test("without energyJ (an older worker) nothing is written for energy, and nothing is shown", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await ran(farm, w, "render", 1_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, cpuMs: 500 });
    const rows = await farm.t.run(async (ctx) => ({ days: await ctx.db.query("creditDays").collect(), deltas: await ctx.db.query("counterDeltas").collect() }));
    expect(rows.days.map((d) => d.energyJ)).toEqual([undefined]);
    expect(rows.deltas.filter((d) => d.type !== undefined)).toEqual([]);
  });

  test.each([
    ["negative", -1],
    ["not a number", Number.NaN],
    ["infinite", Number.POSITIVE_INFINITY],
    ["over the cap", ENERGY_J_MAX * 2],
  ])("energyJ %s is refused (invalid_argument): the attempt does not end and nothing is written", async (_name, energyJ) => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const claim = await ran(farm, w, "render", 1_000);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, energyJ }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "x", energyJ }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
    // the lease still holds: a well-formed end goes through
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, energyJ: 5 });
    expect((await farm.t.query(api.workers.myCredit, { apiKey: w.apiKey })).week.energyJ).toBe(5);
  });

  test("a replicated job's instance counts its energy when it reports, before its credit is granted", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const a = await donor(farm, "a");
    const lease = await instanceLease(farm, a, jobId);
    vi.advanceTimersByTime(10_000);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: lease, result: "r", cpuMs: 5_000, energyJ: 42 });
    const credit = await farm.t.query(api.workers.myCredit, { apiKey: a.apiKey });
    expect(credit.week).toMatchObject({ cpuHours: 0, jobs: 0, energyJ: 42 });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("energy per job type and per donor (the console)", () => {
  test("the summariser folds it per type; console:energy lists types and this week's donors most first; workers and the leaderboard carry it", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { name: "op", canManage: true, maxConcurrentJobs: 4, facts: LAPTOP_FACTS });
    const other = await enrollWorker(farm, { name: "other", maxConcurrentJobs: 4, facts: LAPTOP_FACTS });
    for (const [w, type, j] of [[op, "render", 100], [other, "render", 400], [other, "encode", 50], [op, "encode", 20]] as const) {
      const claim = await ran(farm, w, type, 10_000);
      await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, cpuMs: 1_000, energyJ: j });
    }
    await summarise(farm);
    const energy = await farm.t.query(api.console.energy, { apiKey: op.apiKey, weekOf: MONDAY });
    expect(energy.byType).toEqual([
      { type: "render", energyJ: 500, reports: 2 },
      { type: "encode", energyJ: 70, reports: 2 },
    ]);
    expect(energy.weekByDonor.map((d) => [d.name, d.energyJ])).toEqual([
      ["other", 450],
      ["op", 120],
    ]);
    expect(energy.weekTotalJ).toBe(570);
    const workers = await farm.t.query(api.console.workers, { apiKey: op.apiKey });
    expect(Object.fromEntries(workers.page.map((w) => [w.name, w.energyJ]))).toEqual({ op: 120, other: 450 });
    const board = await farm.t.query(api.console.leaderboard, { apiKey: op.apiKey, weekOf: MONDAY });
    expect(board.week.map((r) => r.energyJ).sort()).toEqual([120, 450]);
    // a plain worker key may not read it
    await expectCode(farm.t.query(api.console.energy, { apiKey: other.apiKey, weekOf: MONDAY }), "forbidden");
  });

  test(`a fold adds up at most ${FOLD_TYPES} job types; the rest wait for the next fold`, async () => {
    const farm = await newFarm();
    const types = FOLD_TYPES + 40;
    await farm.t.run(async (ctx) => {
      for (let i = 0; i < types; i++) await ctx.db.insert("counterDeltas", { orgId: farm.orgId, type: `t${i}`, energyJ: 1 });
    });
    const first = await farm.t.run(async (ctx) => await foldDeltas(ctx, farm.orgId, Number.POSITIVE_INFINITY));
    expect(first).toBe(true);
    const count = () => farm.t.run(async (ctx) => (await ctx.db.query("typeEnergy").collect()).length);
    expect(await count()).toBe(FOLD_TYPES);
    expect(await farm.t.run(async (ctx) => await foldDeltas(ctx, farm.orgId, Number.POSITIVE_INFINITY))).toBe(false);
    expect(await count()).toBe(types);
  });
});

test("a machine that joins again keeps the energy its earlier workers gave (two of them: their rows are summed)", async () => {
  const farm = await newFarm();
  // two workers of one machine (the extension and the headless worker, say), both gone
  for (const energyJ of [77, 23]) {
    const w = await enrollWorker(farm, { maxConcurrentJobs: 1 }); // machine-1
    const claim = await ran(farm, w, "render", 10_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 1, cpuMs: 1_000, energyJ });
  }
  for (const w of await farm.t.run(async (ctx) => await ctx.db.query("workers").collect())) {
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: w._id });
  }
  const again = await enrollWorker(farm, { maxConcurrentJobs: 1 });
  const credit = await farm.t.query(api.workers.myCredit, { apiKey: again.apiKey });
  expect(credit.allTime).toMatchObject({ jobs: 2, energyJ: 100 });
  expect(credit.week.energyJ).toBe(100);
});
