// What the console's Jobs list reads to say why each job waits (convex/queue/waitReasons.ts): a page of 100 jobs
// reads each job once, the summary row once, and each lane, client key and key's running row once — not once per job.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { addKey, setLimits } from "./fairFarm";
import { measure } from "./metrics";
import { enrollWorker, LAPTOP_FACTS, newFarm, refreshSummaries } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12));
});
afterEach(() => {
  vi.useRealTimers();
});

test("a Jobs page of 100 waiting jobs over 2 lanes and 2 client keys reads each lane and key once", { timeout: 60_000 }, async () => {
  const farm = await newFarm();
  await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 4 });
  const keys = [await addKey(farm, "a"), await addKey(farm, "b")];
  for (const key of keys) {
    await setLimits(farm, key, { maxRunning: 5 });
    // 25 jobs of each of two types (two lanes) for each key
    const jobs = Array.from({ length: 50 }, (_, i) => ({ type: i % 2 === 0 ? "x" : "demo.echo", payload: { i } }));
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: key.key, jobs });
  }
  await refreshSummaries(farm.t);
  const ops = (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" })).key;
  const { usage, result } = await measure(farm.t, "query", api.console.jobs, { apiKey: ops, filter: {}, paginationOpts: { numItems: 100, cursor: null } });
  expect(result.page).toHaveLength(100);
  // every job was asked why (the key reads happen only past the lane's checks)
  expect(result.page.every((j) => j.status === "pending")).toBe(true);
  // the operator key, 100 jobs, the summary, 2 lanes, 2 client keys and their 2 running rows (was 402: 3 per job)
  expect(usage.documentsRead).toBeLessThanOrEqual(1 + 100 + 1 + 2 + 2 * 2);
});
