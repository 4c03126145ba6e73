import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, snapshot, TEST_TYPES, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

afterEach(() => {
  vi.useRealTimers();
});

async function operatorKey(farm: Farm) {
  return (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" })).key;
}

/** Entries straight in the tables (as storeResult writes them): `count` of `type`, expiring at `expiresAt`. */
async function seedEntries(farm: Farm, type: string, count: number, expiresAt: number) {
  const source = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type });
  await farm.t.run(async (ctx) => {
    for (let i = 0; i < count; i++) {
      const entryId = await ctx.db.insert("cacheEntries", { orgId: farm.orgId, key: `${type}-${i}`, type, sourceJobId: source, resultBytes: 10, validated: true, createdAt: 0, expiresAt });
      await ctx.db.insert("cacheResults", { entryId, result: i });
    }
  });
}

const count = async (farm: Farm, table: "cacheEntries" | "cacheResults") => (await farm.t.run(async (ctx) => await ctx.db.query(table).collect())).length;

test("invalidateCache {type} drops that type's entries in pages, leaving others, each with its result row", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const key = await operatorKey(farm);
  await seedEntries(farm, "a", 120, Date.now() + 3_600_000);
  await seedEntries(farm, "b", 3, Date.now() + 3_600_000);
  const first = await farm.t.mutation(api.consoleActions.invalidateCache, { apiKey: key, type: "a" });
  expect(first).toEqual({ dropped: 50, more: true });
  await farm.t.finishAllScheduledFunctions(() => vi.runAllTimers());
  expect(await count(farm, "cacheEntries")).toBe(3);
  expect(await count(farm, "cacheResults")).toBe(3);
  await farm.t.mutation(api.consoleActions.invalidateCache, { apiKey: key });
  expect(await count(farm, "cacheEntries")).toBe(0);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("an invalidated result is not re-served: the next identical job runs", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  await farm.t.mutation(api.consoleAccess.setCacheUnvalidated, { apiKey: key, on: true });
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: 1, cache: true });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: "wrong" });
  await farm.t.mutation(api.consoleActions.invalidateCache, { apiKey: key, type: "x" });
  const again = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: 1, cache: true });
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: again }))!.status).toBe("pending");
});

test("retention prunes expired entries in pages and keeps live ones", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  await seedEntries(farm, "old", 70, Date.now() - 1);
  await seedEntries(farm, "live", 2, Date.now() + 60_000);
  await farm.t.mutation(internal.cache.pruneExpired, {});
  await farm.t.finishAllScheduledFunctions(() => vi.runAllTimers());
  expect(await count(farm, "cacheEntries")).toBe(2);
  expect(await count(farm, "cacheResults")).toBe(2);
});

test("only an operator key sets cacheUnvalidated; access:list reports it; a bad key changes nothing", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const manager = await enrollWorker(farm, { canManage: true });
  expect((await farm.t.query(api.consoleAccess.list, { apiKey: key })).cacheUnvalidated).toBe(false);
  const before = await snapshot(farm.t);
  await expectCode(farm.t.mutation(api.consoleAccess.setCacheUnvalidated, { apiKey: manager.apiKey, on: true }), "forbidden");
  await expectCode(farm.t.mutation(api.consoleActions.invalidateCache, { apiKey: "fh_o_" + "Z".repeat(43) }), "bad_key");
  expect(await snapshot(farm.t)).toEqual(before);
  await farm.t.mutation(api.consoleAccess.setCacheUnvalidated, { apiKey: key, on: true });
  expect((await farm.t.query(api.consoleAccess.list, { apiKey: key })).cacheUnvalidated).toBe(true);
});

test("console:job shows a hit's cachedFrom and that a job is cacheable (its page offers to drop its type's entries)", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  await farm.t.mutation(api.consoleAccess.setCacheUnvalidated, { apiKey: key, on: true });
  const w = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: 1, cache: true });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 2 });
  const hit = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: 1, cache: true });
  expect(await farm.t.query(api.console.job, { apiKey: key, jobId: hit })).toMatchObject({ status: "succeeded", cachedFrom: first, cacheable: true, result: 2 });
  const plain = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  expect((await farm.t.query(api.console.job, { apiKey: key, jobId: plain }))!.cacheable).toBe(false);
});
