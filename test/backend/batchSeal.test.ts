import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * Sealed batches (pipelines/batchSeals.ts): a batch submitted in several calls with `seal` keeps its children waiting
 * until it is sealed, even when every job so far has ended between two calls; a sealed batch takes no more jobs.
 */

afterEach(() => vi.useRealTimers());

async function runAll(farm: Farm, w: Enrolled, type: string) {
  for (;;) {
    const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [type], max: 4 });
    if (claims.length === 0) return;
    for (const c of claims) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { n: 1 } });
  }
}

const statusOf = async (farm: Farm, jobId: string) => (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status;
const chunk = (farm: Farm, n: number, seal?: boolean) =>
  farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: n }, () => ({ type: "j1", batchId: "frames" })), ...(seal !== undefined ? { seal } : {}) });

test("without a seal a child starts between two chunks; with one it waits for the last chunk and reads every result", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2"] });
  // as before: no seal, the batch looks finished between chunks and the child is released with part of its inputs
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "plain" }] });
  const early = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "plain" } });
  await runAll(farm, w, "j1");
  expect(await statusOf(farm, early)).toBe("pending");

  await chunk(farm, 3, false);
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "frames" } });
  await runAll(farm, w, "j1");
  expect(await statusOf(farm, child)).toBe("waiting");
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "frames" })).toMatchObject({ done: true, sealed: false });
  expect(await checkConsistency(farm.t)).toEqual([]);
  await chunk(farm, 2, true);
  expect(await statusOf(farm, child)).toBe("waiting");
  await runAll(farm, w, "j1");
  expect(await statusOf(farm, child)).toBe("pending");
  const [lease] = (await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["j2"], max: 2 })).filter((c) => c.jobId === child);
  const inputs = await farm.t.query(api.workers.inputs, { apiKey: w.apiKey, leaseId: lease.leaseId, cursor: null });
  expect(inputs.page).toHaveLength(5);
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "frames" })).toMatchObject({ sealed: true });
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "plain" })).not.toHaveProperty("sealed");
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("jobs:sealBatch releases the children of a batch whose jobs all succeeded, in pages; sealing again does nothing", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2"] });
  await chunk(farm, 2, false);
  const children = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 150 }, () => ({ type: "j2", dependsOn: { batch: "frames" } })) });
  await runAll(farm, w, "j1");
  expect(await farm.t.mutation(api.jobs.sealBatch, { clientKey: farm.clientKey, batchId: "frames" })).toEqual({ batchId: "frames", sealed: true });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  for (const id of children) expect(await statusOf(farm, id)).toBe("pending");
  expect(await farm.t.mutation(api.jobs.sealBatch, { clientKey: farm.clientKey, batchId: "frames" })).toEqual({ batchId: "frames", sealed: true });
  // a child submitted now, after the seal, is pending at once
  const late = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "frames" } });
  expect(await statusOf(farm, late)).toBe("pending");
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a sealed batch takes no more jobs; a failed job of an unsealed batch cancels its children at once", async () => {
  const farm = await newFarm();
  await chunk(farm, 1, true);
  await expectCode(chunk(farm, 1), "invalid_argument");
  await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", batchId: "frames" }), "invalid_argument");
  expect((await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).length).toBe(1);

  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "open", maxAttempts: 1 }], seal: false });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "open" } });
  const open = (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).find((j) => j.batchId === "open")!;
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: open._id });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child })).toMatchObject({ status: "canceled", errorCode: "dependency_failed" });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("bad seals: jobs of several batches or none, an unknown batch; HTTP takes seal beside jobs", async () => {
  const farm = await newFarm();
  await expectCode(
    farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "a" }, { type: "j1", batchId: "b" }], seal: true }),
    "invalid_argument",
  );
  await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1" }], seal: true }), "invalid_argument");
  await expectCode(farm.t.mutation(api.jobs.sealBatch, { clientKey: farm.clientKey, batchId: "never" }), "not_found");
  const post = (body: unknown) =>
    farm.t.fetch("/api/jobs", { method: "POST", headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect((await post({ jobs: [{ type: "j1", batchId: "h" }], seal: false })).status).toBe(201);
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "h" })).toMatchObject({ sealed: false });
  expect((await post({ jobs: [{ type: "j1", batchId: "h" }], seal: "yes" })).status).toBe(400);
  expect((await post({ jobs: [{ type: "j1", batchId: "h" }], seal: true })).status).toBe(201);
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "h" })).toMatchObject({ sealed: true, total: 2 });
  expect(await checkConsistency(farm.t)).toEqual([]);
});
