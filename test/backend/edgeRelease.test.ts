import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import { enrollWorker, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * A parent with thousands of direct children settles their edges in pages (pipelines/dependencies.ts settleEdges: 100
 * edges and a byte budget per transaction, then dependencies:settle), under Convex's transaction limits
 * (newBackend enforces them): every child is released (or canceled) exactly once.
 */

afterEach(() => vi.useRealTimers());

const SUBMIT_CHUNK = 500;

async function submitChildren(farm: Farm, count: number, dependsOn: { jobs?: string[]; batch?: string }) {
  const ids: string[] = [];
  for (let done = 0; done < count; done += SUBMIT_CHUNK) {
    const jobs = Array.from({ length: Math.min(SUBMIT_CHUNK, count - done) }, (_, i) => ({ type: "j2", payload: done + i, dependsOn }));
    ids.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs })));
  }
  return ids;
}

async function jobsAndEvents(farm: Farm) {
  return await farm.t.run(async (ctx) => ({
    jobs: await ctx.db.query("jobs").collect(),
    releases: (await ctx.db.query("jobEvents").collect()).filter((e) => e.kind === "dependencies-met"),
  }));
}

async function completeOne(farm: Farm, w: Enrolled, type: string) {
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [type], max: 1 });
  expect(claim).toBeDefined();
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result: { ok: true } });
  return claim.jobId;
}

test("a parent with 3,000 direct children releases them in pages, each exactly once", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const children = await submitChildren(farm, 3_000, { jobs: [parent] });
  await completeOne(farm, w, "j1");
  // the first page is released with the parent's completion; the rest wait for their page, consistently
  const first = await jobsAndEvents(farm);
  const pending = first.jobs.filter((j) => j.type === "j2" && j.status === "pending").length;
  expect(pending).toBeGreaterThan(0);
  expect(pending).toBeLessThan(3_000);
  expect(await checkConsistency(farm.t)).toEqual([]);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  const after = await jobsAndEvents(farm);
  const childSet = new Set(children);
  expect(after.jobs.filter((j) => childSet.has(j._id)).every((j) => j.status === "pending")).toBe(true);
  const releasesPerChild = new Map<string, number>();
  for (const e of after.releases) releasesPerChild.set(e.jobId, (releasesPerChild.get(e.jobId) ?? 0) + 1);
  expect(releasesPerChild.size).toBe(3_000);
  expect([...releasesPerChild.values()].every((n) => n === 1)).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
  expect(TEST_TYPES).toContain("j2");
}, 240_000);

test("a canceled parent cancels its 1,200 waiting children in pages, naming it", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  await submitChildren(farm, 1_200, { jobs: [parent] });
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: parent });
  expect(await checkConsistency(farm.t)).toEqual([]);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  const children = (await jobsAndEvents(farm)).jobs.filter((j) => j.type === "j2");
  expect(children).toHaveLength(1_200);
  expect(children.every((j) => j.status === "canceled" && j.errorCode === "dependency_failed" && j.failedParent === parent)).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
}, 120_000);

test("a batch's children released in pages: a job added to the batch before a page runs holds the rest back until it succeeds", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "b" }] });
  await submitChildren(farm, 250, { batch: "b" });
  await completeOne(farm, w, "j1");
  const waitingAfterFirstPage = (await jobsAndEvents(farm)).jobs.filter((j) => j.type === "j2" && j.status === "waiting").length;
  expect(waitingAfterFirstPage).toBeGreaterThan(0);
  // a job joins the batch before the next page: the children still waiting wait for it too
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j3", batchId: "b" }] });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect((await jobsAndEvents(farm)).jobs.filter((j) => j.type === "j2" && j.status === "waiting")).toHaveLength(waitingAfterFirstPage);
  expect(await checkConsistency(farm.t)).toEqual([]);
  await completeOne(farm, w, "j3");
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  const { jobs, releases } = await jobsAndEvents(farm);
  expect(jobs.filter((j) => j.type === "j2").every((j) => j.status === "pending")).toBe(true);
  expect(releases).toHaveLength(250);
  expect(await checkConsistency(farm.t)).toEqual([]);
}, 120_000);
