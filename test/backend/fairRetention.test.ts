// What fair share keeps over time (convex/retention.ts): a fairness key's pass idle a day goes (it would come back at
// its lanes' virtual time anyway), a client key's stays; a deleted lane's clocks and cursors go with it.
import { afterEach, expect, test, vi } from "vitest";
import { internal } from "../../convex/_generated/api";
import { newFarm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

afterEach(() => vi.useRealTimers());

const DAY = 24 * 60 * 60_000;

test("fairness keys' passes idle a day go; client keys' passes, fresh ones and live lanes' clocks stay; a deleted lane's go", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const ci = (await farm.t.run(async (ctx) => await ctx.db.query("clientKeys").first()))!._id;
  const now = Date.now();
  const { liveLane, goneLane } = await farm.t.run(async (ctx) => {
    const liveLane = await ctx.db.insert("lanes", { orgId: farm.orgId, routingKey: "live", capabilities: ["live"] });
    const goneLane = await ctx.db.insert("lanes", { orgId: farm.orgId, routingKey: "gone", capabilities: ["gone"] });
    await ctx.db.insert("laneShards", { orgId: farm.orgId, laneId: liveLane, shard: 0, pending: 0, running: 0 });
    const pass = { orgId: farm.orgId, negPriority: 0, clientKeyId: ci, pass: 3 };
    await ctx.db.insert("fairPasses", { ...pass, scope: "flow", fairnessKey: "idle", at: now - 2 * DAY });
    await ctx.db.insert("fairPasses", { ...pass, scope: "flow", fairnessKey: "fresh", at: now - 60_000 });
    await ctx.db.insert("fairPasses", { ...pass, scope: "key", at: now - 30 * DAY });
    for (const laneId of [liveLane, goneLane]) {
      await ctx.db.insert("fairClocks", { orgId: farm.orgId, laneId, negPriority: 0, scope: "keys", vtime: 2 });
      await ctx.db.insert("fairCursors", { orgId: farm.orgId, laneId, negPriority: 0, after: { clientKeyId: ci, fairnessKey: "m" } });
    }
    return { liveLane, goneLane };
  });
  // a job keeps the live lane: the lane sweep deletes the other one
  await farm.t.run(async (ctx) => {
    const job = await ctx.db.insert("jobs", {
      orgId: farm.orgId, laneId: liveLane, type: "live", priority: 0, negPriority: -0, requiredCapabilities: ["live"], status: "pending",
      queue: "delayed", attempt: 0, maxAttempts: 1, leaseMs: 60_000, availableAt: now + DAY,
    });
    await ctx.scheduler.runAt(now + DAY, internal.janitor.promote, { jobId: job });
    await ctx.db.patch((await ctx.db.query("laneShards").first())!._id, { pending: 1 });
  });
  const swept = await farm.t.mutation(internal.retention.sweepRecords, {});
  expect(swept.deleted.fairPasses).toBe(1);
  await farm.t.mutation(internal.retention.sweepLanes, {});
  const left = await farm.t.run(async (ctx) => ({
    passes: (await ctx.db.query("fairPasses").collect()).map((p) => `${p.scope}:${p.fairnessKey ?? ""}`).sort(),
    clocks: (await ctx.db.query("fairClocks").collect()).map((c) => c.laneId),
    cursors: (await ctx.db.query("fairCursors").collect()).map((c) => c.laneId),
  }));
  expect(left).toEqual({ passes: ["flow:fresh", "key:"], clocks: [liveLane], cursors: [liveLane] });
  expect(goneLane).not.toBe(liveLane);
  expect(await checkConsistency(farm.t)).toEqual([]);
});
