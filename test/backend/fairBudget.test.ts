// Many fairness keys at once (convex/queue/fairQueue.ts, fairRound.ts): a round reads at most FAIR.flowsPerRound
// flows and its byte budget, stays within a transaction's limits, and the next round goes on where it stopped, so
// no fairness key waits behind the first ones for good.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { TX_BUDGET } from "../../convex/core/budget";
import { FAIR } from "../../convex/queue/fairLimits";
import { addKey, dispatchAll, newIndexedFarm, offeredTo, type Key } from "./fairFarm";
import { measure } from "./metrics";
import { enrollWorker, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const TENANTS = 1_000;
// fat job rows (about 1.4 KiB each): sixteen long capabilities, a long batch id
const CAPS = Array.from({ length: 16 }, (_, i) => `cap-${String(i).padStart(2, "0")}-${"x".repeat(52)}`);

/** One job per tenant (fairness key), tenant-0000 first. */
async function oneJobPerTenant(farm: Farm, app: Key) {
  for (let done = 0; done < TENANTS; done += 500) {
    const jobs = Array.from({ length: 500 }, (_, i) => ({
      type: "x",
      fairnessKey: `tenant-${String(done + i).padStart(4, "0")}`,
      requiredCapabilities: CAPS,
      batchId: "b".repeat(256),
    }));
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: app.key, jobs });
    vi.setSystemTime(Date.now() + 1);
  }
}

async function waitingBigWorkers(farm: Farm, n: number): Promise<Enrolled[]> {
  const workers: Enrolled[] = [];
  for (let i = 0; i < n; i++) {
    const w = await enrollWorker(farm, { name: `w${i}`, capabilities: CAPS, maxConcurrentJobs: 32 });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 32 });
    workers.push(w);
    vi.setSystemTime(Date.now() + 5);
  }
  return workers;
}

test(`${TENANTS} fairness keys with ready jobs at once: a round reads ${FAIR.flowsPerRound} of them within its budgets, and the next goes on after them`, { timeout: 120_000 }, async () => {
  const farm = await newIndexedFarm();
  const app = await addKey(farm, "app");
  await oneJobPerTenant(farm, app);
  const workers = await waitingBigWorkers(farm, 2);
  const state = (await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").first()))!;
  const round = await measure(farm.t, "mutation", internal.dispatch.run, { orgId: farm.orgId, generation: state.generation });
  expect(round.result.offered).toBe(32);
  // the flows it read and a little more (waiting lines, offers): never the whole level, nor near a transaction's limits
  expect(round.usage.documentsRead).toBeLessThan(FAIR.flowsPerRound + 150);
  expect(round.usage.bytesRead).toBeLessThan(TX_BUDGET.rangeReadBytes / 8);
  expect(round.usage.databaseQueries).toBeLessThan(3 * FAIR.flowsPerRound + 100);
  const tenantsOf = async () => {
    const ids = await offeredTo(farm, workers);
    const jobs = await farm.t.run(async (ctx) => await Promise.all(ids.map((id) => ctx.db.get(id))));
    return jobs.map((j) => Number(j!.fairnessKey!.slice("tenant-".length)));
  };
  // the first round took the oldest of the tenants it read; the next starts after them
  expect((await tenantsOf()).every((n) => n < FAIR.flowsPerRound)).toBe(true);
  await dispatchAll(farm, 1);
  const tenants = await tenantsOf();
  expect(tenants).toHaveLength(64);
  expect(tenants.slice(32).every((n) => n >= FAIR.flowsPerRound && n < 2 * FAIR.flowsPerRound)).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
});
