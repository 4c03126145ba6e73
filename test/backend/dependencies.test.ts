import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { enrollWorker, expectCode, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

afterEach(() => {
  vi.useRealTimers();
});

async function statusOf(farm: Farm, jobId: string) {
  return (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;
}

/** Claim what the worker is offered and end each claimed job of `ids` as told (others are released). */
async function run(farm: Farm, w: Enrolled, outcome: Record<string, { result: unknown } | { error: string; retryable?: boolean }>) {
  const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 4 });
  const seen: string[] = [];
  for (const c of claimed) {
    const how = outcome[c.jobId];
    seen.push(c.jobId);
    if (!how) await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: c.leaseId });
    else if ("result" in how) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: how.result });
    else await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: how.error, retryable: how.retryable ?? false });
  }
  return seen;
}

async function consistent(farm: Farm) {
  expect(await checkConsistency(farm.t)).toEqual([]);
}

test("a child of listed parents waits, is never offered, and a canceled parent cancels it naming that parent", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 1 });
  const a = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", externalId: "a" });
  const b = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", priority: 9, dependsOn: { jobs: [a, b] } });
  expect(await statusOf(farm, child)).toMatchObject({ status: "waiting", unmetParents: 2, dependsOn: { jobs: [a, b] } });
  await consistent(farm);
  expect(await run(farm, w, {})).not.toContain(child);
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: a });
  expect(await statusOf(farm, child)).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: a });
  await consistent(farm);
});

test("parents succeeding in any order release the child once, and workers:inputs pages their results", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 1 });
  const a = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", externalId: "a" });
  const b = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", priority: 5 });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", priority: 9, dependsOn: { jobs: [a, b] } });
  // b runs first (higher priority); the child, of higher priority still, is not offered while it waits
  expect(await run(farm, w, { [b]: { result: { n: 2 } } })).toEqual([b]);
  expect(await statusOf(farm, child)).toMatchObject({ status: "waiting", unmetParents: 1 });
  await consistent(farm);
  expect(await run(farm, w, { [a]: { result: { n: 1 } } })).toEqual([a]);
  expect(await statusOf(farm, child)).toMatchObject({ status: "pending" });
  await consistent(farm);
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(claim.jobId).toBe(child);
  const inputs = await farm.t.query(api.workers.inputs, { apiKey: w.apiKey, leaseId: claim.leaseId, cursor: null });
  expect(inputs).toEqual({ page: [{ jobId: a, externalId: "a", result: { n: 1 } }, { jobId: b, result: { n: 2 } }], cursor: null, done: true });
  const kinds = await farm.t.run(async (ctx) => (await ctx.db.query("jobEvents").withIndex("by_job", (q) => q.eq("jobId", child as Id<"jobs">)).collect()).map((e) => e.kind));
  expect(kinds).toEqual(["submitted", "dependencies-met", "claimed"]);
  await consistent(farm);
});

test("a batch's child waits for every job of the batch, including ones added before it is released", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 4 });
  const [p1, p2] = await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: [{ type: "j1", batchId: "frames", payload: 1 }, { type: "j1", batchId: "frames", payload: 2 }],
  });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "frames" } });
  await run(farm, w, { [p1]: { result: 1 } });
  const p3 = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", batchId: "frames" });
  await run(farm, w, { [p2]: { result: 2 } });
  expect((await statusOf(farm, child)).status).toBe("waiting");
  await consistent(farm);
  const seen = await run(farm, w, { [p3]: { result: 3 } });
  expect(seen).toEqual([p3]);
  expect((await statusOf(farm, child)).status).toBe("pending");
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  const inputs = await farm.t.query(api.workers.inputs, { apiKey: w.apiKey, leaseId: claim.leaseId, cursor: null });
  expect(inputs.page.map((row) => row.result)).toEqual([1, 2, 3]);
  await consistent(farm);
});

test("a parent's retries keep its child waiting; the child is released when a retry succeeds", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", maxAttempts: 2 });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { jobs: [parent] } });
  await run(farm, w, { [parent]: { error: "flaky", retryable: true } });
  expect((await statusOf(farm, parent)).status).toBe("pending");
  expect((await statusOf(farm, child)).status).toBe("waiting");
  await consistent(farm);
  vi.advanceTimersByTime(120_000);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  await run(farm, w, { [parent]: { result: "ok" } });
  expect((await statusOf(farm, child)).status).toBe("pending");
  await consistent(farm);
});

test("a dead parent cancels its waiting children, and theirs (in the children's own scheduled page), with dependency_failed naming the parent", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", maxAttempts: 1 });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { jobs: [parent] } });
  const grandchild = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j4", dependsOn: { jobs: [child] } });
  await run(farm, w, { [parent]: { error: "boom" } });
  expect((await statusOf(farm, parent)).status).toBe("dead");
  expect(await statusOf(farm, child)).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: parent });
  expect((await statusOf(farm, grandchild)).status).toBe("waiting");
  await consistent(farm);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect(await statusOf(farm, grandchild)).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: child });
  expect((await statusOf(farm, child)).error).toContain(parent);
  // the console's job page names the parent
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  expect(await farm.t.query(api.console.job, { apiKey: key, jobId: child })).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: parent });
  await consistent(farm);
});

test("a canceled batch cancels the batch's waiting child; a child submitted after it is canceled at once", async () => {
  const farm = await newFarm();
  const [p1] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "b" }, { type: "j1", batchId: "b" }] });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "b" } });
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: p1 });
  expect(await statusOf(farm, child)).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: p1 });
  const late = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "b" } });
  expect(await statusOf(farm, late)).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: p1 });
  await consistent(farm);
});

test("a child submitted after its parents succeeded is pending at once", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const [p1] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "done" }] });
  await run(farm, w, { [p1]: { result: 7 } });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "done", jobs: [p1] } });
  expect(await statusOf(farm, child)).toMatchObject({ status: "pending" });
  await consistent(farm);
});

test("a waiting child can be canceled; its edges go with it and its parents' ends change nothing", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { jobs: [parent] } });
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: child })).toEqual({ status: "canceled" });
  await consistent(farm);
  await run(farm, w, { [parent]: { result: 1 } });
  expect((await statusOf(farm, child)).status).toBe("canceled");
  await consistent(farm);
});

test("bad dependsOn: unknown, malformed, another org's, too many, empty, its own batch", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  const theirs = await other.t.mutation(api.jobs.submit, { clientKey: other.clientKey, type: "j1" });
  const submit = (dependsOn: unknown, extra: Record<string, unknown> = {}) =>
    farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: dependsOn as never, ...extra });
  await expectCode(submit({ jobs: ["nope"] }), "not_found");
  await expectCode(submit({ jobs: [theirs] }), "not_found");
  await expectCode(submit({ batch: "never-seen" }), "not_found");
  await expectCode(submit({}), "invalid_argument");
  await expectCode(submit({ jobs: Array.from({ length: 101 }, (_, i) => `id${i}`) }), "too_large");
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", batchId: "mine" });
  await expectCode(submit({ batch: "mine" }, { batchId: "mine" }), "invalid_argument");
  // a refused child in a batch call rolls the whole call back
  await expectCode(
    farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "x" }, { type: "j3", dependsOn: { jobs: ["nope"] } }] }),
    "not_found",
  );
  const jobs = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
  expect(jobs.filter((j) => j.orgId === farm.orgId)).toHaveLength(1);
  await consistent(farm);
});

test("purge refuses a waiting job; a retried dead parent of a batch counts as unfinished again", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { jobs: [parent] } });
  const { purgeJob } = await import("../../convex/queue/deadLetters");
  await expectCode(farm.t.run(async (ctx) => await purgeJob(ctx, (await ctx.db.get(child))!)), "invalid_argument");
  const [p] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "r", maxAttempts: 1 }] });
  await run(farm, w, { [p]: { error: "x" } });
  const { retryDeadJob } = await import("../../convex/queue/deadLetters");
  await farm.t.run(async (ctx) => await retryDeadJob(ctx, (await ctx.db.get(p))!));
  await consistent(farm);
  const late = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { batch: "r" } });
  // the batch's failure is forgiven by the retry: the late child waits for the retried job
  expect((await statusOf(farm, late)).status).toBe("waiting");
  await consistent(farm);
});

test("HTTP: POST /api/jobs takes dependsOn, one job or a batch; a bad parent answers 404 and writes nothing", async () => {
  const farm = await newFarm();
  const post = async (body: unknown) =>
    await farm.t.fetch("/api/jobs", { method: "POST", headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const one = await post({ type: "j3", dependsOn: { jobs: [parent] } });
  expect(one.status).toBe(201);
  const { jobId } = (await one.json()) as { jobId: string };
  expect(await statusOf(farm, jobId)).toMatchObject({ status: "waiting", dependsOn: { jobs: [parent] } });
  const batch = await post({ jobs: [{ type: "j3", dependsOn: { jobs: [parent] } }] });
  expect(batch.status).toBe(201);
  const bad = await post({ type: "j3", dependsOn: { jobs: ["nope"] } });
  expect(bad.status).toBe(404);
  expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("not_found");
  await consistent(farm);
});

test("an operator's bulk cancel reaches waiting jobs too", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j3", dependsOn: { jobs: [parent] } });
  await farm.t.mutation(api.consoleActions.bulk, { apiKey: key, action: "cancel", filter: { type: "j3" } });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect((await statusOf(farm, child)).status).toBe("canceled");
  expect((await statusOf(farm, parent)).status).toBe("pending");
  await consistent(farm);
});
