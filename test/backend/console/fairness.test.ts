// The console's view of fair share: the Overview per client key, the Jobs page's client key and fairness key
// filters (bulk actions take the same filter), a job's page naming the key it counts against and why it waits.
import type { FunctionReturnType } from "convex/server";
import { getDocumentSize } from "convex/values";
import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import type { JobFilter } from "../../../convex/queue/jobQuery";
import { expectCode, newFarm, refreshSummaries, TEST_TYPES, withoutSystemFields, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";

afterEach(() => vi.useRealTimers());

async function twoKeys() {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const ops = (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" })).key;
  const app = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "app" });
  const ci = (await farm.t.run(async (ctx) => (await ctx.db.query("clientKeys").collect()).find((k) => k.name === "ci")))!._id;
  return { farm, ops, app, ci };
}

const submit = (farm: Farm, clientKey: string, n: number, fairnessKey?: string) =>
  farm.t.mutation(api.jobs.submitBatch, { clientKey, jobs: Array.from({ length: n }, () => ({ type: "x", ...(fairnessKey ? { fairnessKey } : {}) })) });

async function everyId(farm: Farm, apiKey: string, filter: JobFilter) {
  const ids: string[] = [];
  const served = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const page: FunctionReturnType<typeof api.console.jobs> = await farm.t.query(api.console.jobs, { apiKey, filter, paginationOpts: { numItems: 4, cursor } });
    ids.push(...page.page.map((j) => j.jobId));
    served.add(`${page.index} checked:${page.checked.join(",")}`);
    if (page.isDone) return { ids, served: [...served] };
    cursor = page.continueCursor;
  }
  throw new Error("paging never ended");
}

test("the Overview shows each client key's running and waiting jobs, its share of the last hour's starts and its oldest wait", async () => {
  const { farm, ops, app } = await twoKeys();
  await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId: app.clientKeyId, weight: 3, maxRunning: 5 });
  await submit(farm, farm.clientKey, 4);
  vi.advanceTimersByTime(1_000);
  await submit(farm, app.key, 4);
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4 });
  const worker = await farm.t.mutation(api.workers.enroll, { token, name: "w", machineId: "m", capabilities: TEST_TYPES });
  // four starts: three of app's (weight 3) and one of ci's
  const started = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES, max: 4 });
  expect(started).toHaveLength(4);
  // within the jobs' leases (a minute)
  vi.advanceTimersByTime(30_000);
  await refreshSummaries(farm.t);
  const overview = await farm.t.query(api.console.overview, { apiKey: ops });
  const byName = Object.fromEntries(overview.clientKeys.map((k) => [k.name, k]));
  expect(byName.app).toMatchObject({ weight: 3, maxRunning: 5, running: 3, waiting: 1, startedLastHour: 3, shareLastHour: 0.75 });
  expect(byName.ci).toMatchObject({ weight: 1, maxRunning: null, running: 1, waiting: 3, startedLastHour: 1, shareLastHour: 0.25 });
  // ci's first jobs were submitted a second before app's
  expect(Date.now() - byName.ci.oldestReadyAt!).toBe(31_000);
  expect(Date.now() - byName.app.oldestReadyAt!).toBe(30_000);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("the Overview finds a busy key behind hundreds of idle keys' totals, within the summary's byte budget", async () => {
  const { farm, ops, app } = await twoKeys();
  // 300 keys that once had work and have none now: their totals rows come before app's in the org's range
  await farm.t.run(async (ctx) => {
    const fields = withoutSystemFields((await ctx.db.get(app.clientKeyId))!);
    for (let i = 0; i < 300; i++) {
      const idle = await ctx.db.insert("clientKeys", { ...fields, name: `idle-${i}`, keyHash: `idle-${i}-${fields.keyHash}` });
      await ctx.db.insert("keyShards", { orgId: farm.orgId, clientKeyId: idle, pending: 0, running: 0 });
    }
  });
  await submit(farm, app.key, 2);
  vi.advanceTimersByTime(30_000);
  await refreshSummaries(farm.t);
  const overview = await farm.t.query(api.console.overview, { apiKey: ops });
  expect(overview.clientKeys.map((k) => [k.name, k.waiting])).toEqual([["app", 2]]);
  // the 1,000 totals a summary reads at most fit its 256 KiB for them (a row is about 100 bytes)
  const rows = await farm.t.run(async (ctx) => await ctx.db.query("keyShards").collect());
  expect(rows.length).toBe(301);
  expect((1000 * rows.reduce((sum, row) => sum + getDocumentSize(row), 0)) / rows.length).toBeLessThan(256 * 1024);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("the Jobs page filters by client key, and by its fairness key, newest first, each by an index", async () => {
  const { farm, ops, app, ci } = await twoKeys();
  const mine = await submit(farm, farm.clientKey, 3);
  const theirs: Id<"jobs">[] = [];
  for (const user of ["u1", "u2", "u1"]) {
    vi.advanceTimersByTime(1_000);
    theirs.push(...(await submit(farm, app.key, 2, user)));
  }
  const newestFirst = (ids: string[]) => [...ids].reverse();
  expect(await everyId(farm, ops, { clientKeyId: ci })).toEqual({ ids: newestFirst(mine), served: ["by_org_client checked:"] });
  expect(await everyId(farm, ops, { clientKeyId: app.clientKeyId })).toEqual({ ids: newestFirst(theirs), served: ["by_org_client checked:"] });
  const u1 = [...theirs.slice(0, 2), ...theirs.slice(4)];
  expect(await everyId(farm, ops, { clientKeyId: app.clientKeyId, fairnessKey: "u1" })).toEqual({ ids: newestFirst(u1), served: ["by_org_client_fairness checked:"] });
  // with a status too, the key's index serves and the status is checked on its pages
  expect((await everyId(farm, ops, { clientKeyId: app.clientKeyId, status: "pending" })).served).toEqual(["by_org_client checked:status"]);
  // a fairness key alone is checked on every page of the org's jobs
  expect((await everyId(farm, ops, { fairnessKey: "u2" })).ids).toEqual(newestFirst(theirs.slice(2, 4)));
  // rows say whose they are
  const [row] = (await farm.t.query(api.console.jobs, { apiKey: ops, filter: { clientKeyId: app.clientKeyId }, paginationOpts: { numItems: 1, cursor: null } })).page;
  expect(row).toMatchObject({ clientKeyId: app.clientKeyId, fairnessKey: "u1" });
  await expectCode(farm.t.query(api.console.jobs, { apiKey: ops, filter: { fairnessKey: "k".repeat(65) }, paginationOpts: { numItems: 5, cursor: null } }), "too_large");
});

test("a job's page says which key it counts against and, held back at the key's limit, why it waits", async () => {
  const { farm, ops, app } = await twoKeys();
  await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId: app.clientKeyId, maxRunning: 1 });
  const [running, held] = await submit(farm, app.key, 2, "tenant-9");
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4 });
  const worker = await farm.t.mutation(api.workers.enroll, { token, name: "w", machineId: "m", capabilities: TEST_TYPES });
  expect((await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES, max: 4 })).map((c) => c.jobId)).toEqual([running]);
  const page = (await farm.t.query(api.console.job, { apiKey: ops, jobId: held }))!;
  expect(page.countsAgainst).toEqual({ clientKeyId: app.clientKeyId, name: "app", weight: 1, maxRunning: 1, fairnessKey: "tenant-9" });
  expect(page.waitReason).toBe("client key 'app' is at its limit of 1 running");
  expect((await farm.t.query(api.console.job, { apiKey: ops, jobId: running }))!.waitReason).toBeNull();
  expect(await checkConsistency(farm.t)).toEqual([]);
});
