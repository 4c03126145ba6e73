import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import { enrollWorker, runningJobs, newFarm, overviewNow, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

async function running() {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", leaseMs: 10_000 });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  return { farm, w, jobId, claim };
}

test("a pending job is canceled at once and never claimed", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId })).toEqual({ status: "canceled" });
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
  const overview = await overviewNow(farm.t, w.apiKey);
  expect(overview.counts).toMatchObject({ pending: 0, canceled: 1 });
  // canceling again is harmless
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId })).toEqual({ status: "canceled" });
});

test("a running job is flagged; the worker learns it from heartbeat and mine; its next write ends it canceled", async () => {
  const { farm, w, jobId, claim } = await running();
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId })).toEqual({ status: "running", cancelRequested: true });
  expect((await runningJobs(farm.t, w.apiKey))[0].cancelRequested).toBe(true);
  expect((await farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claim.leaseId })).cancel).toBe(true);
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status).toBe("running");
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: claim.leaseId, error: "aborted" });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ status: "canceled" });
  const overview = await overviewNow(farm.t, w.apiKey);
  expect(overview.counts).toMatchObject({ running: 0, canceled: 1, dead: 0 });
});

test.each(["complete", "release"] as const)("%s after a cancel request ends the job canceled", async (how) => {
  const { farm, w, jobId, claim } = await running();
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
  if (how === "complete") await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: "late" });
  else await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: claim.leaseId });
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status).toBe("canceled");
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES })).toEqual([]);
});

test("a canceled running job whose worker vanished ends canceled at lease expiry", async () => {
  vi.useFakeTimers();
  const { farm, jobId } = await running();
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
  vi.advanceTimersByTime(10_000);
  await farm.t.finishInProgressScheduledFunctions();
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status).toBe("canceled");
  const kinds = await farm.t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).map((e) => e.kind));
  expect(kinds).toEqual(["submitted", "claimed", "cancel-requested", "heartbeat-expired", "canceled"]);
});

test("a finished job cannot be canceled", async () => {
  const { farm, w, jobId, claim } = await running();
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: 42 });
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId })).toEqual({ status: "succeeded" });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ status: "succeeded", result: 42 });
});
