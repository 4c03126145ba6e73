import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { enrollWorker, newFarm, refreshSummaries, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { scrapeSamples, sumOf } from "./scrapeText";

/**
 * A farm upgraded with jobs in flight: jobs from before the metrics are not counted (and never counted down) until
 * migrations:meterJobs counts them, batch by batch, while the queue keeps moving.
 */

afterEach(() => vi.useRealTimers());

/** The farm as it was before the metrics: its jobs unmetered, no totals, no moves waiting to be folded. */
async function forgetMetrics(farm: Farm) {
  await farm.t.run(async (ctx) => {
    for (const job of await ctx.db.query("jobs").collect()) await ctx.db.patch(job._id, { metered: undefined });
    for (const table of ["metricCells", "metricClients", "metricTypes", "metricOrgs"] as const) for (const row of await ctx.db.query(table).collect()) await ctx.db.delete(row._id);
    for (const d of await ctx.db.query("counterDeltas").collect()) if (d.jobs) await ctx.db.patch(d._id, { jobs: undefined });
  });
}

test("jobs from before the metrics count once meterJobs has run, and jobs moving meanwhile stay counted right", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
  const w = await enrollWorker(farm, { maxConcurrentJobs: 8 });
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 250 }, (_, i) => ({ type: "x", payload: i })) });
  await forgetMetrics(farm);
  // an old job runs before the migration: nothing counted, nothing counted down
  const [early] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: early.leaseId, result: 1 });
  await refreshSummaries(farm.t);
  expect(sumOf(await scrapeSamples(farm.t, key), "farmhand_jobs")).toBe(0);
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the first batch of 200 is counted; jobs of it move before the second batch runs
  expect(await farm.t.mutation(internal.migrations.meterJobs, {})).toEqual({ metered: 200, done: false });
  const moved = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 8 });
  for (const c of moved) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  expect(await checkConsistency(farm.t)).toEqual([]);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  await refreshSummaries(farm.t);
  const samples = await scrapeSamples(farm.t, key);
  expect(sumOf(samples, "farmhand_jobs", { status: "pending" })).toBe(250 - 1 - moved.length);
  expect(sumOf(samples, "farmhand_jobs", { status: "succeeded" })).toBe(1 + moved.length);
  expect(await checkConsistency(farm.t)).toEqual([]);
  // again: nothing more to count
  expect(await farm.t.mutation(internal.migrations.meterJobs, {})).toMatchObject({ metered: 0 });
});
