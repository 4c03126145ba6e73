import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, overviewNow } from "../setup";
import { allJobs, copyDeadJobs, deadJob } from "./helpers";

afterEach(() => vi.useRealTimers());

test("bulk retry of 450 dead letters runs in scheduled batches of 100 and reports its progress", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const first = await deadJob(farm, op, { type: "render" });
  await copyDeadJobs(farm, first, 449);
  const other = await deadJob(farm, op, { type: "encode" });
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "retry", filter: { status: "dead", type: "render" } });
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId })).toMatchObject({ done: false, affected: 0 });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  const status = await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId });
  expect(status).toMatchObject({ done: true, affected: 450, scanned: 450, action: "retry" });
  expect(status!.batches).toBe(5); // 4 full batches and the one that finds the range's end
  const jobs = await allJobs(farm);
  expect(jobs.filter((j) => j.type === "render" && j.status === "dead")).toHaveLength(0);
  expect(jobs.find((j) => j._id === other)!.status).toBe("dead");
  expect((await overviewNow(farm.t, op.apiKey)).counts).toMatchObject({ dead: 1, pending: 450 });
});

test("bulk cancel takes pending and running jobs of a batch, passes over the rest", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const dead = await deadJob(farm, op, { batchId: "nightly" });
  const pending = [];
  for (let i = 0; i < 5; i++) pending.push(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", batchId: "nightly" }));
  const elsewhere = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", batchId: "other" });
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "nightly" } });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId })).toMatchObject({ done: true, affected: 5, scanned: 6 });
  const byId = new Map((await allJobs(farm)).map((j) => [j._id as string, j.status]));
  expect(pending.map((id) => byId.get(id))).toEqual(Array(5).fill("canceled"));
  expect([byId.get(dead), byId.get(elsewhere)]).toEqual(["dead", "pending"]);
});

test("purge dead letters deletes them with their output and events; other jobs stay", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const first = await deadJob(farm, op);
  await copyDeadJobs(farm, first, 30);
  const kept = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const { bulkId } = await farm.t.mutation(api.consoleActions.purgeDead, { apiKey: op.apiKey });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId })).toMatchObject({ done: true, affected: 31, action: "purge" });
  expect((await allJobs(farm)).map((j) => j._id)).toEqual([kept]);
  const events = await farm.t.run(async (ctx) => await ctx.db.query("jobEvents").collect());
  expect(events.filter((e) => e.jobId === first)).toEqual([]);
  expect((await overviewNow(farm.t, op.apiKey)).counts.dead).toBe(0);
  await expectCode(farm.t.mutation(api.consoleActions.purgeDead, { apiKey: op.apiKey, from: 5, to: 1 }), "invalid_argument");
});

test("another org's bulk status reads as null", async () => {
  const a = await newFarm(undefined, "a");
  const b = await newFarm(a.t, "b");
  const opA = await enrollWorker(a, { canManage: true });
  const opB = await enrollWorker(b, { canManage: true });
  const { bulkId } = await a.t.mutation(api.consoleActions.bulk, { apiKey: opA.apiKey, action: "cancel", filter: {} });
  expect(await a.t.query(api.console.bulkStatus, { apiKey: opB.apiKey, bulkId })).toBeNull();
});
