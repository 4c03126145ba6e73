import { expect, test } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { CELLS_READ } from "../../../convex/observability/scrape";
import { measure } from "../metrics";
import { enrollWorker, newFarm, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { samplesOf, sumOf } from "./scrapeText";

/**
 * A scrape's cost does not follow the farm's size: at 200 job types (the lane cap), each submitted by six client
 * keys with ready jobs waiting in every lane, it reads at most 2,000 documents and 1 MiB, and still accounts for
 * every job (the (type, client) pairs past those it reads count under other/other).
 */

const TYPES = 200;
const CLIENTS = 6;

/** Fold every counter change of the org (a fold takes a bounded number of metric rows at a time). */
async function foldAll(farm: Farm) {
  for (let i = 0; i < 100; i++) {
    await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, all: true });
    const left = await farm.t.run(async (ctx) => await ctx.db.query("counterDeltas").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).first());
    if (!left) return;
  }
  throw new Error("counter changes left after 100 folds");
}

test(`a scrape at ${TYPES} job types and ${CLIENTS} client keys reads at most 2,000 documents and 1 MiB, and counts every job`, async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
  const types = Array.from({ length: TYPES }, (_, i) => `type-${String(i).padStart(3, "0")}.${"x".repeat(40)}`);
  for (let c = 0; c < CLIENTS; c++) {
    const { key: clientKey } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: `client-${c}` });
    // long external ids and batch ids: bigger job rows for the lane heads the scrape reads
    const jobs = types.map((type, i) => ({ type, payload: { c }, externalId: `${c}-${i}-${"e".repeat(200)}`, batchId: `batch-${c}-${"b".repeat(200)}` }));
    for (let i = 0; i < jobs.length; i += 100) await farm.t.mutation(api.jobs.submitBatch, { clientKey, jobs: jobs.slice(i, i + 100) });
  }
  // a worker of every type runs one job of each, so every type has waits and runs in its histograms
  const w = await enrollWorker(farm, { types, maxConcurrentJobs: 32 });
  for (let i = 0; i < TYPES; i += 25) {
    const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 25 });
    for (const c of claims) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { ok: true } });
  }
  await foldAll(farm);
  expect(await checkConsistency(farm.t)).toEqual([]);

  const { usage, result } = await measure(farm.t, "query", internal.metrics.scrape, { apiKey: key, now: Date.now() });
  expect(usage.documentsRead).toBeLessThanOrEqual(2_000);
  expect(usage.bytesRead).toBeLessThanOrEqual(1024 * 1024);
  const samples = samplesOf(result);
  const jobs = TYPES * CLIENTS;
  expect(sumOf(samples, "farmhand_jobs", { status: "pending" }) + sumOf(samples, "farmhand_jobs", { status: "succeeded" })).toBe(jobs);
  expect(sumOf(samples, "farmhand_jobs_finished_total")).toBe(TYPES);
  // more pairs than a scrape reads: the rest are there, under other/other
  expect(jobs).toBeGreaterThan(CELLS_READ);
  expect(sumOf(samples, "farmhand_jobs", { type: "other", client: "other" })).toBeGreaterThan(0);
  // the 100 busiest types have series of their own, the rest one "other"
  expect(new Set(samples.filter((s) => s.name === "farmhand_job_wait_seconds_count").map((s) => s.labels.type)).size).toBe(101);
  expect(sumOf(samples, "farmhand_job_wait_seconds_count")).toBe(TYPES);
  console.log(`scrape at ${TYPES} types × ${CLIENTS} keys: ${usage.documentsRead} documents, ${Math.round(usage.bytesRead / 1024)} KiB read`);
}, 300_000);
