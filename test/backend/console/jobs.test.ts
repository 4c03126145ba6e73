import type { FunctionReturnType } from "convex/server";
import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import type { Doc } from "../../../convex/_generated/dataModel";
import type { JobFilter } from "../../../convex/queue/jobQuery";
import { enrollWorker, expectCode, newFarm, snapshot, type Enrolled, type Farm, TEST_TYPES } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { allJobs, deadJob } from "./helpers";

afterEach(() => vi.useRealTimers());

/** Page through a filter to the end; every page's jobs, and what the pages said about how they were served. */
async function everyPage(farm: Farm, op: Enrolled, filter: JobFilter, numItems = 3) {
  const ids: string[] = [];
  const served = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page: FunctionReturnType<typeof api.console.jobs> = await farm.t.query(api.console.jobs, { apiKey: op.apiKey, filter, paginationOpts: { numItems, cursor } });
    expect(page.scanned).toBeLessThanOrEqual(numItems);
    ids.push(...page.page.map((j) => j.jobId));
    served.add(`${page.index} checked:${page.checked.join(",")}`);
    if (page.isDone) return { ids, served: [...served] };
    cursor = page.continueCursor;
  }
  throw new Error("paging never ended");
}

async function mixedFarm() {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, capabilities: ["cpu"] });
  for (let i = 0; i < 4; i++) await deadJob(farm, op, { type: i % 2 ? "render" : "encode", batchId: i < 2 ? "b1" : undefined });
  vi.advanceTimersByTime(60_000);
  for (let i = 0; i < 6; i++) {
    await farm.t.mutation(api.jobs.submit, {
      clientKey: farm.clientKey,
      type: i % 3 ? "render" : "encode",
      batchId: i % 2 ? "b1" : "b2",
      externalId: `ext-${i}`,
    });
    vi.advanceTimersByTime(1_000);
  }
  return { farm, op };
}

const newestFirst = (jobs: Doc<"jobs">[]) => [...jobs].sort((a, b) => b._creationTime - a._creationTime).map((j) => j._id as string);

test("each filter finds exactly the matching jobs, newest first, across pages; each says which index served it", async () => {
  const { farm, op } = await mixedFarm();
  const jobs = await allJobs(farm);
  const cases: Array<{ filter: JobFilter; want: (j: Doc<"jobs">) => boolean; served: string }> = [
    { filter: {}, want: () => true, served: "by_org checked:" },
    { filter: { status: "dead" }, want: (j) => j.status === "dead", served: "by_org_status_created checked:" },
    { filter: { type: "render" }, want: (j) => j.type === "render", served: "by_org_type checked:" },
    { filter: { status: "pending", type: "render" }, want: (j) => j.status === "pending" && j.type === "render", served: "by_org_status_type checked:" },
    { filter: { batchId: "b1" }, want: (j) => j.batchId === "b1", served: "by_org_batch checked:" },
    { filter: { externalId: "ext-3" }, want: (j) => j.externalId === "ext-3", served: "by_org_external checked:" },
    // no index serves batch + status: the batch's pages are checked for the status
    { filter: { batchId: "b1", status: "dead" }, want: (j) => j.batchId === "b1" && j.status === "dead", served: "by_org_batch checked:status" },
    { filter: { batchId: "b1", type: "render", status: "pending" }, want: (j) => j.batchId === "b1" && j.type === "render" && j.status === "pending", served: "by_org_batch checked:status,type" },
  ];
  for (const { filter, want, served } of cases) {
    const result = await everyPage(farm, op, filter);
    expect(result.ids, JSON.stringify(filter)).toEqual(newestFirst(jobs.filter(want)));
    expect(result.served).toEqual([served]);
  }
});

test("the time range bounds the submitted time ([from, to)) on every index", async () => {
  const { farm, op } = await mixedFarm();
  const jobs = await allJobs(farm);
  const sorted = [...jobs].sort((a, b) => a._creationTime - b._creationTime);
  const from = sorted[3]._creationTime;
  const to = sorted[8]._creationTime;
  const inRange = (j: Doc<"jobs">) => j._creationTime >= from && j._creationTime < to;
  for (const extra of [{}, { status: "pending" as const }, { type: "render" }, { batchId: "b1" }, { status: "pending" as const, type: "encode" }]) {
    const result = await everyPage(farm, op, { ...extra, from, to });
    const want = jobs.filter((j) => inRange(j) && Object.entries(extra).every(([k, v]) => j[k as keyof typeof j] === v));
    expect(result.ids, JSON.stringify(extra)).toEqual(newestFirst(want));
  }
});

test("bad filters and page sizes are refused", async () => {
  const { farm, op } = await mixedFarm();
  const page = (filter: JobFilter, numItems = 10) =>
    farm.t.query(api.console.jobs, { apiKey: op.apiKey, filter, paginationOpts: { numItems, cursor: null } });
  await expectCode(page({ from: 10, to: 5 }), "invalid_argument");
  await expectCode(page({ from: Number.NaN }), "invalid_argument");
  await expectCode(page({ type: "x".repeat(500) }), "too_large");
  await expectCode(page({}, 0), "invalid_argument");
  await expectCode(page({}, 101), "invalid_argument");
});

test("a job's page tells its whole story: submitted, claimed by whom, failed, retried after a backoff, released, succeeded", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, name: "op" });
  const donor = await enrollWorker(farm, { name: "donor-box" });
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "story", payload: { n: 7 }, maxAttempts: 3 });
  let [claim] = await farm.t.mutation(api.workers.claim, { apiKey: donor.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.output, { apiKey: donor.apiKey, leaseId: claim.leaseId, chunk: "first try\n" });
  await farm.t.mutation(api.workers.fail, { apiKey: donor.apiKey, leaseId: claim.leaseId, error: "flaky" });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  [claim] = await farm.t.mutation(api.workers.claim, { apiKey: donor.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.release, { apiKey: donor.apiKey, leaseId: claim.leaseId });
  [claim] = await farm.t.mutation(api.workers.claim, { apiKey: op.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.heartbeat, { apiKey: op.apiKey, leaseId: claim.leaseId, progress: 0.5 });
  await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: claim.leaseId, result: { ok: 1 }, cpuMs: 0 });

  const page = (await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId }))!;
  expect(page).toMatchObject({ status: "succeeded", payload: { n: 7 }, result: { ok: 1 }, progress: 1, workerName: "op", cpuMeasured: true });
  expect(page.output.text).toBe("first try\n");
  const story = page.events.map((e) => [e.kind, e.workerName ?? null]);
  expect(story).toEqual([
    ["submitted", null],
    ["claimed", "donor-box"],
    ["failed", "donor-box"],
    ["retried", "donor-box"],
    ["claimed", "donor-box"],
    ["released", "donor-box"],
    ["claimed", "op"],
    ["done", "op"],
  ]);
  const retried = page.events.find((e) => e.kind === "retried")!;
  expect(retried.backoffMs).toBeGreaterThan(0);
  expect(page.events.every((e, i) => i === 0 || e.at >= page.events[i - 1].at)).toBe(true);

  const output = await farm.t.query(api.console.jobOutput, { apiKey: op.apiKey, jobId, fromSeq: 0 });
  expect(output).toEqual({ text: "first try\n", nextSeq: 1, more: false });
  expect(await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId: "nonsense" })).toBeNull();
});

test("retry and cancel one job from the console", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, name: "op" });
  const dead = await deadJob(farm, op);
  await farm.t.mutation(api.consoleActions.retryJob, { apiKey: op.apiKey, jobId: dead });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: dead })).toMatchObject({ status: "pending", attempt: 0 });
  await expectCode(farm.t.mutation(api.consoleActions.retryJob, { apiKey: op.apiKey, jobId: dead }), "invalid_argument");
  expect(await farm.t.mutation(api.consoleActions.cancelJob, { apiKey: op.apiKey, jobId: dead })).toEqual({ status: "canceled" });
  const page = (await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId: dead }))!;
  expect(page.events.map((e) => e.kind).slice(-2)).toEqual(["retried", "canceled"]);
  expect(page.events.at(-1)!.detail).toBe("canceled by op");
});

test("purge one dead letter from the console with an operator key: only dead letters, only its org's", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  const worker = await enrollWorker(farm, { name: "donor" });
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "alice" });
  const otherKey = (await other.t.mutation(internal.admin.createOperatorKey, { orgId: other.orgId, name: "bob" })).key;
  const dead = await deadJob(farm, worker);
  const pending = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const before = await snapshot(farm.t);
  await expectCode(farm.t.mutation(api.consoleActions.purgeJob, { apiKey: key, jobId: pending }), "invalid_argument");
  await expectCode(farm.t.mutation(api.consoleActions.purgeJob, { apiKey: otherKey, jobId: dead }), "not_found");
  await expectCode(farm.t.mutation(api.consoleActions.purgeJob, { apiKey: key, jobId: "nonsense" }), "not_found");
  expect(await snapshot(farm.t)).toEqual(before);
  expect(await farm.t.mutation(api.consoleActions.purgeJob, { apiKey: key, jobId: dead })).toEqual({ purged: true });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: dead })).toBeNull();
  expect(await checkConsistency(farm.t)).toEqual([]);
});
