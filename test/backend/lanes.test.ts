import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { LIMITS } from "../../convex/core/limits";
import { checkConsistency } from "./sweep/consistency";
import { jobRow, laneCounts, runDue, scheduled } from "./queueState";
import { enrollWorker, expectCode, newFarm, type Farm } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const submit = (farm: Farm, caps: string[], extra: { delayMs?: number; maxAttempts?: number } = {}) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: caps, ...extra });

async function laneKeys(farm: Farm) {
  return await farm.t.run(async (ctx) => (await ctx.db.query("lanes").collect()).map((l) => l.routingKey).sort());
}

describe("the lane maintenance pass", () => {
  test("deletes lanes holding nothing pending or running, with their shards and waiting lines, and keeps the rest", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["*"], capabilities: ["done", "ready", "late", "busy", "offer"], maxConcurrentJobs: 4 });
    // "done": only a finished job; "ready", "late" (delayed), "busy" (running), "offer" (offered): not empty
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["done", "x"], max: 1 });
    const doneJob = await submit(farm, ["done"]);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["done", "x"] });
    expect(c.jobId).toBe(doneJob);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
    await submit(farm, ["late"], { delayMs: 3_600_000 });
    await submit(farm, ["busy"]);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["busy", "x"] });
    const waiter = await enrollWorker(farm, { name: "waiter", allowed: ["*"], capabilities: ["offer", "done"] });
    await farm.t.mutation(api.workers.ready, { apiKey: waiter.apiKey, capabilities: ["offer", "done", "x"], slots: 1 });
    await submit(farm, ["offer"]);
    await runDue(farm.t);
    await submit(farm, ["ready"]);
    const doneLane = (await jobRow(farm.t, doneJob)).laneId;
    expect(await laneKeys(farm)).toEqual(["busy,x", "done,x", "late,x", "offer,x", "ready,x"]);

    expect(await farm.t.mutation(internal.retention.sweepLanes, {})).toEqual({ deletedLanes: 1, more: false });
    expect(await laneKeys(farm)).toEqual(["busy,x", "late,x", "offer,x", "ready,x"]);
    const leftovers = await farm.t.run(async (ctx) => ({
      shards: (await ctx.db.query("laneShards").collect()).filter((s) => s.laneId === doneLane),
      deltas: (await ctx.db.query("counterDeltas").collect()).filter((d) => d.laneId === doneLane),
      lines: (await ctx.db.query("laneWaiters").collect()).filter((r) => r.laneId === doneLane),
    }));
    expect(leftovers).toEqual({ shards: [], deltas: [], lines: [] });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("the retention sweep runs it when it is done (one writer)", async () => {
    const farm = await newFarm();
    await submit(farm, ["a"]);
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: (await farm.t.run(async (ctx) => await ctx.db.query("jobs").first()))!._id });
    await farm.t.mutation(internal.retention.sweep, {});
    expect(await scheduled(farm.t, "retention:sweepLanes", "pending")).toHaveLength(1);
    await runDue(farm.t);
    expect(await laneKeys(farm)).toEqual([]);
  });

  test("a retried dead letter recreates its deleted lane by routing key and runs again", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["gpu"], capabilities: ["gpu"] });
    const jobId = await submit(farm, ["gpu"], { maxAttempts: 1 });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["gpu", "x"] });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: "x", retryable: false });
    await farm.t.mutation(internal.retention.sweepLanes, {});
    expect(await laneKeys(farm)).toEqual([]);
    await farm.t.mutation(internal.admin.retryDead, { jobId });
    expect(await laneKeys(farm)).toEqual(["gpu,x"]);
    const lane = await farm.t.run(async (ctx) => (await ctx.db.query("lanes").first())!);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready", laneId: lane._id });
    expect(await laneCounts(farm)).toEqual({ "gpu,x": { pending: 1, running: 0 } });
    const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["gpu", "x"] });
    expect(again.jobId).toBe(jobId);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("an org that filled its lane cap can submit new capability sets again after the pass", async () => {
    const farm = await newFarm();
    const ids = await farm.t.mutation(api.jobs.submitBatch, {
      clientKey: farm.clientKey,
      jobs: Array.from({ length: LIMITS.lanesPerOrg }, (_, i) => ({ type: "x", requiredCapabilities: [`c${i}`] })),
    });
    await expectCode(submit(farm, ["one-more"]), "invalid_argument");
    for (const jobId of ids) await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
    for (let more = true; more; ) more = (await farm.t.mutation(internal.retention.sweepLanes, {})).more;
    await runDue(farm.t, 20);
    expect(await laneKeys(farm)).toEqual([]);
    await submit(farm, ["one-more"]);
    expect(await laneKeys(farm)).toEqual(["one-more,x"]);
  });
});
