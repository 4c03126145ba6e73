import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { enrollWorker, expectCode, newFarm, refreshSummaries, snapshot, TEST_TYPES, type Farm } from "./setup";
import { scrapeSamples, sumOf } from "./prometheus/scrapeText";
import { checkConsistency } from "./sweep/consistency";
import { donor, instanceLease } from "./validationDonors";

afterEach(() => {
  vi.useRealTimers();
});

type Worker = Awaited<ReturnType<typeof enrollWorker>>;

async function runOne(farm: Farm, w: Worker, result: unknown) {
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result });
  return c.jobId;
}

async function jobOf(farm: Farm, jobId: Id<"jobs">) {
  return (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;
}

async function runScheduled(farm: Farm) {
  await farm.t.finishAllScheduledFunctions(() => vi.runAllTimers());
}

async function optIn(farm: Farm) {
  await farm.t.run(async (ctx) => await ctx.db.patch(farm.orgId, { cacheUnvalidated: true }));
}

const spec = (farm: Farm, payload: unknown = { n: 1 }) => ({ clientKey: farm.clientKey, type: "x", payload, cache: true as const });

test("a single worker's result is not cached by default: the repeat runs again", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, spec(farm));
  await runOne(farm, w, { answer: 1 });
  const again = await farm.t.mutation(api.jobs.submit, spec(farm));
  expect((await jobOf(farm, again)).status).toBe("pending");
  expect(await farm.t.run(async (ctx) => await ctx.db.query("cacheEntries").collect())).toHaveLength(0);
});

test("with cacheUnvalidated, a repeat is created succeeded with the result and cachedFrom, no donor runs it, it counts as a hit", async () => {
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, spec(farm));
  await runOne(farm, w, { answer: 1 });
  const again = await farm.t.mutation(api.jobs.submit, spec(farm));
  expect(await jobOf(farm, again)).toMatchObject({ status: "succeeded", result: { answer: 1 }, cachedFrom: first });
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
  // another payload, type or requirements class is another key
  expect((await jobOf(farm, await farm.t.mutation(api.jobs.submit, spec(farm, { n: 2 })))).status).toBe("pending");
  expect((await jobOf(farm, await farm.t.mutation(api.jobs.submit, { ...spec(farm), requirements: { minCores: 4 } }))).status).toBe("pending");
  // a job without cache neither reads nor is answered
  expect((await jobOf(farm, await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: { n: 1 } }))).status).toBe("pending");
  await refreshSummaries(farm.t);
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
  expect(sumOf(await scrapeSamples(farm.t, key), "farmhand_cache_hits_total")).toBe(1);
  // the console's Overview shows the same counter, beside the jobs that succeeded (the hit is one of them)
  expect(await farm.t.query(api.console.overview, { apiKey: key })).toMatchObject({ cacheHits: 1, finished: { succeeded: 2 } });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a validated result (quorum 2 agreeing) enters the cache without the opt-in", async () => {
  const farm = await newFarm();
  const first = await farm.t.mutation(api.jobs.submit, { ...spec(farm), validation: { quorum: 2 } });
  for (const name of ["a", "b"]) {
    const w = await donor(farm, name);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: await instanceLease(farm, w, first), result: { answer: 7 } });
  }
  expect((await jobOf(farm, first)).status).toBe("succeeded");
  const entries = await farm.t.run(async (ctx) => await ctx.db.query("cacheEntries").collect());
  expect(entries.map((e) => ({ validated: e.validated, sourceJobId: e.sourceJobId }))).toEqual([{ validated: true, sourceJobId: first }]);
  const again = await farm.t.mutation(api.jobs.submit, spec(farm));
  expect(await jobOf(farm, again)).toMatchObject({ status: "succeeded", result: { answer: 7 }, cachedFrom: first });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("an entry expires with its ttl and is not served after", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, { ...spec(farm), cache: { ttlMs: 60_000 } });
  await runOne(farm, w, 1);
  vi.advanceTimersByTime(61_000);
  expect((await jobOf(farm, await farm.t.mutation(api.jobs.submit, spec(farm)))).status).toBe("pending");
});

test("bad cache specs are refused, writing nothing", async () => {
  const farm = await newFarm();
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const before = await snapshot(farm.t);
  await expectCode(farm.t.mutation(api.jobs.submit, { ...spec(farm), cache: { ttlMs: 5 } }), "invalid_argument");
  await expectCode(farm.t.mutation(api.jobs.submit, { ...spec(farm), cache: { ttlMs: 1e12 } }), "invalid_argument");
  await expectCode(farm.t.mutation(api.jobs.submit, { ...spec(farm), dependsOn: { jobs: [parent] } }), "invalid_argument");
  expect(await snapshot(farm.t)).toEqual(before);
});

test("a cache hit's dependents are released, and it ends with a done event without being claimed", async () => {
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, spec(farm));
  await runOne(farm, w, 3);
  const hit = await farm.t.mutation(api.jobs.submit, spec(farm));
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", dependsOn: { jobs: [hit] } });
  expect((await jobOf(farm, child)).status).toBe("pending");
  const events = await farm.t.run(async (ctx) => await ctx.db.query("jobEvents").collect());
  expect(events.filter((e) => e.jobId === hit).map((e) => e.kind)).toEqual(["submitted", "done"]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("single flight: identical jobs wait on the one in flight and take its result, paged", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, spec(farm));
  const waiters: Array<Id<"jobs">> = [];
  for (let i = 0; i < 3; i++) waiters.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 90 }, () => ({ type: "x", payload: { n: 1 }, cache: true })) })));
  expect((await jobOf(farm, waiters[0])).status).toBe("waiting");
  expect(await checkConsistency(farm.t)).toEqual([]);
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 10 });
  expect(c.jobId).toBe(first);
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 9 });
  await runScheduled(farm);
  for (const id of [waiters[0], waiters[269]]) expect(await jobOf(farm, id)).toMatchObject({ status: "succeeded", result: 9, cachedFrom: first });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("single flight: when the first fails, the waiters run themselves", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, spec(farm));
  const waiter = await farm.t.mutation(api.jobs.submit, spec(farm));
  expect((await jobOf(farm, waiter)).status).toBe("waiting");
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: first });
  await runScheduled(farm);
  expect((await jobOf(farm, waiter)).status).toBe("pending");
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(c.jobId).toBe(waiter);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("single flight: a single worker's result without the opt-in is not handed to the waiters", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, spec(farm));
  const waiter = await farm.t.mutation(api.jobs.submit, spec(farm));
  await runOne(farm, w, "a liar's answer");
  await runScheduled(farm);
  expect((await jobOf(farm, waiter)).status).toBe("pending");
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a batch of hits of a large result copies within the write budget; the rest wait and take it in scheduled pages", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  await optIn(farm);
  const w = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, spec(farm));
  const big = "r".repeat(200 * 1024);
  await runOne(farm, w, big);
  const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 30 }, () => ({ type: "x", payload: { n: 1 }, cache: true })) });
  const now = await Promise.all(ids.map((id) => jobOf(farm, id)));
  expect(now.filter((j) => j.status === "succeeded").length).toBeLessThan(15);
  expect(now.filter((j) => j.status === "waiting").length).toBeGreaterThan(15);
  expect(await checkConsistency(farm.t)).toEqual([]);
  await runScheduled(farm);
  for (const id of ids) expect(await jobOf(farm, id)).toMatchObject({ status: "succeeded", cachedFrom: first, result: big });
  expect(await checkConsistency(farm.t)).toEqual([]);
});
