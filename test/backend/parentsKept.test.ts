import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { scheduled } from "./queueState";
import { enrollWorker, expectCode, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * Parents outlive the children that read them (pipelines/parentRefs.ts): retention and purge keep a succeeded job while a
 * child that has not ended names it or its batch; a child whose inputs are gone anyway fails with inputs_gone and
 * never runs with fewer inputs.
 */

const DAY = 24 * 60 * 60_000;

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

async function runOne(farm: Farm, w: Enrolled, type: string, result: unknown = { ok: true }) {
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [type], max: 1 });
  expect(claim, `a ${type} job to run`).toBeDefined();
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claim.leaseId, result });
  return claim.jobId;
}

/** The whole retention chain (its passes run one after the other), and nothing else that is due later. */
async function sweepAll(farm: Farm) {
  await farm.t.mutation(internal.retention.sweep, { olderThanMs: DAY });
  while ((await scheduled(farm.t, "retention:", "pending")).length > 0) {
    vi.advanceTimersByTime(0);
    await farm.t.finishInProgressScheduledFunctions();
  }
}

const exists = (farm: Farm, id: Id<"jobs">) => farm.t.run(async (ctx) => (await ctx.db.get(id)) !== null);
const jobOf = (farm: Farm, id: string) => farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: id });

test("retention keeps a succeeded parent while its child waits or runs, passes over it to delete the rest, and deletes it once the child ended", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2", "j3"] });
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  await runOne(farm, w, "j1", { n: 1 });
  // 25 older finished jobs after it: more than one run of the sweep deletes
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 25 }, () => ({ type: "j2" })) });
  for (let i = 0; i < 25; i++) await runOne(farm, w, "j2");
  // a parent that waits in the queue until the test runs it (no worker asks for j3 before)
  const other = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { jobs: [parent, other] } });
  vi.advanceTimersByTime(2 * DAY);
  await sweepAll(farm);
  expect(await exists(farm, parent)).toBe(true);
  expect((await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).map((j) => j._id).sort()).toEqual([parent, other, child].sort());
  expect(await checkConsistency(farm.t)).toEqual([]);
  // released and running, the child still reads the parent's result
  await runOne(farm, w, "j3");
  const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["j2"] });
  expect(lease.jobId).toBe(child);
  await sweepAll(farm);
  expect(await exists(farm, parent)).toBe(true);
  const inputs = await farm.t.query(api.workers.inputs, { apiKey: w.apiKey, leaseId: lease.leaseId, cursor: null });
  expect(inputs.page.map((row) => row.jobId)).toEqual([parent, other]);
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: lease.leaseId, result: 2 });
  await sweepAll(farm);
  expect(await exists(farm, parent)).toBe(false);
  expect(await exists(farm, child)).toBe(true); // ended just now: younger than the retention age
  expect(await farm.t.run(async (ctx) => await ctx.db.query("parentRefs").collect())).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
}, 120_000);

test("every job of a batch is kept while a child of the batch has not ended; admin:purge refuses one, naming the child", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2"] });
  const members = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "b" }, { type: "j1", batchId: "b" }] });
  await runOne(farm, w, "j1");
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "b" } });
  await runOne(farm, w, "j1");
  expect((await jobOf(farm, child))!.status).toBe("pending");
  vi.advanceTimersByTime(2 * DAY);
  await sweepAll(farm);
  for (const id of members) expect(await exists(farm, id)).toBe(true);
  await expectCode(farm.t.mutation(internal.admin.purge, { jobId: members[0] }), "invalid_argument");
  const refused = await farm.t.mutation(internal.admin.purge, { jobId: members[0] }).catch((e: { data: { message: string } }) => e.data.message);
  expect(refused).toContain(child);
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: child });
  expect(await farm.t.mutation(internal.admin.purge, { jobId: members[0] })).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a child of a batch whose succeeded jobs were purged fails with inputs_gone: at submit, and at release when its reference was lost", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2", "j3"] });
  const [first] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "old" }, { type: "j1", batchId: "old" }] });
  await runOne(farm, w, "j1");
  await runOne(farm, w, "j1");
  expect(await farm.t.mutation(internal.admin.purge, { jobId: first })).toBe(true);
  const late = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "old" } });
  expect(await jobOf(farm, late)).toMatchObject({ status: "dead", errorCode: "inputs_gone" });
  expect((await jobOf(farm, late))!.error).toContain("purged");

  // a child from before parents were kept (no reference): the batch's job is purged while it waits
  const [done] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "b" }] });
  await runOne(farm, w, "j1");
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j3", batchId: "b" }] });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { batch: "b" } });
  await farm.t.run(async (ctx) => {
    for (const ref of await ctx.db.query("parentRefs").collect()) await ctx.db.delete(ref._id);
  });
  expect(await farm.t.mutation(internal.admin.purge, { jobId: done })).toBe(true);
  await runOne(farm, w, "j3");
  expect(await jobOf(farm, child)).toMatchObject({ status: "dead", errorCode: "inputs_gone" });
  // it cannot be retried: its inputs stay gone
  await expectCode(farm.t.mutation(internal.admin.retryDead, { jobId: child }), "gone");
});

test("a running child whose listed parent is gone anyway gets no inputs page (code gone), never a page without it", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { types: ["j1", "j2"] });
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { jobs: [parent] } });
  await runOne(farm, w, "j1");
  const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(lease.jobId).toBe(child);
  await farm.t.run(async (ctx) => await ctx.db.delete(parent));
  await expectCode(farm.t.query(api.workers.inputs, { apiKey: w.apiKey, leaseId: lease.leaseId, cursor: null }), "gone");
});
