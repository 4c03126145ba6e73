import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { armFault, disarmFaults } from "../../convex/core/faults";
import { TIMING } from "../../convex/core/limits";
import { EDGES_PER_PAGE } from "../../convex/pipelines/settlements";
import { scheduled } from "./queueState";
import { scrapeSamples, sumOf } from "./prometheus/scrapeText";
import { newFarm, refreshSummaries, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * A parent's end never cascades inside one transaction (pipelines/settlements.ts): it settles one page of its own
 * children; a child it ends settles its own children in scheduled pages, each under a settlement row that the
 * watchdog re-arms when a page fails. Transaction limits are on (newBackend): the old recursion threw here.
 */

beforeEach(() => {
  vi.useFakeTimers();
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {}); // convex-test reports the injected fault
});
afterEach(() => {
  disarmFaults();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

async function chain(farm: Farm, depth: number): Promise<Array<Id<"jobs">>> {
  const ids = [await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" })];
  for (let i = 0; i < depth; i++) ids.push(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { jobs: [ids[i]] } }));
  return ids;
}

async function jobsOf(farm: Farm, ids: Array<Id<"jobs">>) {
  return await farm.t.run(async (ctx) => await Promise.all(ids.map(async (id) => (await ctx.db.get(id))!)));
}

/** Run what is due now, over and over, until no settlement page is left; how many rounds that took. */
async function settleAll(farm: Farm): Promise<number> {
  let rounds = 0;
  while (await farm.t.run(async (ctx) => (await ctx.db.query("settlements").first()) !== null)) {
    vi.advanceTimersByTime(0);
    await farm.t.finishInProgressScheduledFunctions();
    rounds++;
  }
  return rounds;
}

const settlementRows = (farm: Farm) => farm.t.run(async (ctx) => await ctx.db.query("settlements").collect());

test("canceling the root of a 700-deep chain ends one level per transaction; every descendant ends canceled naming its parent", async () => {
  const farm = await newFarm();
  const ids = await chain(farm, 700);
  expect(await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: ids[0] })).toEqual({ status: "canceled" });
  // the root's transaction ended its child only; the grandchild waits for the child's own page
  const [, child, grandchild] = await jobsOf(farm, ids.slice(0, 3));
  expect(child).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: ids[0] });
  expect(grandchild.status).toBe("waiting");
  expect(await settlementRows(farm)).toMatchObject([{ parentId: child._id, ok: false }]);
  expect(await checkConsistency(farm.t)).toEqual([]);
  expect(await settleAll(farm)).toBe(700 - 1);
  const jobs = await jobsOf(farm, ids);
  for (const [i, job] of jobs.entries()) {
    if (i === 0) continue;
    expect(job, `level ${i}`).toMatchObject({ status: "canceled", errorCode: "dependency_failed", failedParent: ids[i - 1] });
  }
  expect(await settlementRows(farm)).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
}, 180_000);

test("a 60 × 10 tree with a completion webhook: the root's cancel ends its 60 children, their pages the 600 grandchildren, each delivery queued", async () => {
  const farm = await newFarm();
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "https://hooks.example.com/hook" });
  const root = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const children = await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: Array.from({ length: 60 }, () => ({ type: "j2", dependsOn: { jobs: [root] } })),
  });
  for (const child of children) {
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 10 }, () => ({ type: "j3", dependsOn: { jobs: [child] } })) });
  }
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: root });
  const all = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
  expect(all.filter((j) => j.type === "j2").every((j) => j.status === "canceled")).toBe(true);
  expect(all.filter((j) => j.type === "j3").every((j) => j.status === "waiting")).toBe(true);
  expect(await settlementRows(farm)).toHaveLength(60);
  expect(await checkConsistency(farm.t)).toEqual([]);
  // the deliveries would be attempted against hooks.example.com: only the settlement pages run here
  for (const page of await scheduled(farm.t, "dependencies:settle", "pending")) {
    await farm.t.mutation(internal.dependencies.settle, page.args[0] as { settlementId: Id<"settlements">; generation: number });
  }
  const after = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
  const grandchildren = after.filter((j) => j.type === "j3");
  expect(grandchildren).toHaveLength(600);
  expect(grandchildren.every((j) => j.status === "canceled" && j.errorCode === "dependency_failed" && children.includes(j.failedParent!))).toBe(true);
  expect(await farm.t.run(async (ctx) => (await ctx.db.query("webhookDeliveries").collect()).length)).toBe(661);
}, 120_000);

test("a settlement page that throws is re-armed by the watchdog under a new generation; its descendants still end", async () => {
  const farm = await newFarm();
  const ids = await chain(farm, 3);
  armFault("settle");
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: ids[0] });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await scheduled(farm.t, "dependencies:settle", "failed")).toHaveLength(1);
  const [stuck] = await settlementRows(farm);
  expect(stuck).toMatchObject({ parentId: ids[1], generation: 0 });
  expect((await jobsOf(farm, ids.slice(2))).map((j) => j.status)).toEqual(["waiting", "waiting"]);
  // the org's metric totals as a version that did not count settlements left them
  await refreshSummaries(farm.t);
  await farm.t.run(async (ctx) => {
    const row = (await ctx.db.query("metricOrgs").first())!;
    await ctx.db.patch(row._id, { rearms: { dispatcher: 0, summary: 0, bulk: 0, webhook: 0 } });
  });
  // younger than the stale age: left alone
  vi.advanceTimersByTime(TIMING.settleStaleMs - 1_000);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ settlements: 0 });
  vi.advanceTimersByTime(TIMING.watchdogEveryMs);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ settlements: 1 });
  // counted like the watchdog's other re-arms, under its own loop
  await refreshSummaries(farm.t);
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
  expect(sumOf(await scrapeSamples(farm.t, key), "farmhand_watchdog_rearms_total", { loop: "settlement" })).toBe(1);
  // the lost page of the old generation, run late, does nothing
  await farm.t.mutation(internal.dependencies.settle, { settlementId: stuck._id, generation: 0 });
  expect((await jobsOf(farm, ids.slice(2))).map((j) => j.status)).toEqual(["waiting", "waiting"]);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect((await jobsOf(farm, ids.slice(1))).map((j) => [j.status, j.errorCode])).toEqual(Array(3).fill(["canceled", "dependency_failed"]));
  expect(await settlementRows(farm)).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("each re-arm halves a settlement's pages, and they stay halved", async () => {
  const farm = await newFarm();
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  const total = 2 * EDGES_PER_PAGE;
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: total }, () => ({ type: "j2", dependsOn: { jobs: [parent] } })) });
  const canceled = async () => (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter((j) => j.type === "j2" && j.status === "canceled").length;
  armFault("settle");
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: parent });
  expect(await canceled()).toBe(EDGES_PER_PAGE);
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await canceled()).toBe(EDGES_PER_PAGE);
  vi.advanceTimersByTime(TIMING.settleStaleMs + 1);
  await farm.t.mutation(internal.watchdog.check, {});
  const page = async () => {
    const [next] = await scheduled(farm.t, "dependencies:settle", "pending");
    await farm.t.mutation(internal.dependencies.settle, next.args[0] as { settlementId: Id<"settlements">; generation: number });
    await farm.t.run(async (ctx) => await ctx.scheduler.cancel(next._id));
  };
  await page();
  expect(await canceled()).toBe(EDGES_PER_PAGE * 1.5);
  await page();
  expect(await canceled()).toBe(total);
  expect(await settlementRows(farm)).toEqual([]);
});

test("a page scheduled before an upgrade (its settlement in its arguments) goes on under a settlement row", async () => {
  const farm = await newFarm();
  const parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 150 }, () => ({ type: "j2", dependsOn: { jobs: [parent] } })) });
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: parent });
  // as an older version left it: no settlement row, a page that carries the settlement itself
  await farm.t.run(async (ctx) => {
    for (const row of await ctx.db.query("settlements").collect()) await ctx.db.delete(row._id);
    for (const f of await ctx.db.system.query("_scheduled_functions").collect()) if (f.name === "dependencies:settle" && f.state.kind === "pending") await ctx.scheduler.cancel(f._id);
    const job = (await ctx.db.get(parent))!;
    await ctx.scheduler.runAfter(0, internal.dependencies.settle, { orgId: job.orgId, parentId: parent, ok: false, why: `parent job ${parent} ended canceled` });
  });
  vi.advanceTimersByTime(0);
  await farm.t.finishInProgressScheduledFunctions();
  expect(await settlementRows(farm)).toHaveLength(1);
  await settleAll(farm);
  const children = (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter((j) => j.type === "j2");
  expect(children.every((j) => j.status === "canceled" && j.failedParent === parent)).toBe(true);
  expect(await settlementRows(farm)).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});
