import { expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, newFarm } from "./setup";
import { seedPending } from "./seed";

test("timing", async () => {
  const farm = await newFarm();
  const workers: any[] = [];
  for (let i = 0; i < 40; i++) workers.push(await enrollWorker(farm, { maxConcurrentJobs: 1, name: `w${i}` }));
  await seedPending(farm, 5000);
  const time = async (label: string, f: () => Promise<unknown>) => {
    const t0 = performance.now();
    const r = await f();
    console.log(label, (performance.now() - t0).toFixed(1), "ms");
    return r;
  };
  const claims: any[] = [];
  for (let i = 0; i < 5; i++) claims.push(...((await time("head claim", () => farm.t.mutation(api.workers.claim, { apiKey: workers[i].apiKey, capabilities: [] }))) as any[]));
  for (let i = 0; i < 5; i++) await time("complete slots", () => farm.t.mutation(api.workers.complete, { apiKey: workers[i].apiKey, leaseId: claims[i].leaseId, result: 1, slots: 1 }));
  await time("dispatch run", () => farm.t.run(async (ctx: any) => { const s = await ctx.db.query("dispatchStates").first(); await ctx.db.patch(s._id, { scheduled: true }); }));
  const st = await farm.t.run(async (ctx: any) => (await ctx.db.query("dispatchStates").first()).generation);
  await time("dispatch run", () => farm.t.mutation(internal.dispatch.run, { orgId: farm.orgId, generation: st }));
  for (let i = 0; i < 5; i++) await time("offer claim", () => farm.t.mutation(api.workers.claim, { apiKey: workers[i].apiKey, capabilities: [] }));
  await time("doorbell", () => farm.t.query(api.workers.doorbell, { apiKey: workers[0].apiKey }));
  await time("submit", () => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" }));
  await time("a jobs index query", () => farm.t.run(async (ctx: any) => ctx.db.query("jobs").withIndex("by_lease", (q: any) => q.eq("leaseId", "x")).first()));
  await time("a jobs get", () => farm.t.run(async (ctx: any) => ctx.db.get(claims[0].jobId)));
  expect(1).toBe(1);
}, 120_000);

test("timing D parts", async () => {
  const farm = await newFarm();
  const workers: any[] = [];
  for (let i = 0; i < 10; i++) workers.push(await enrollWorker(farm, { maxConcurrentJobs: 1, name: `w${i}` }));
  for (const w of workers) await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [] });
  await seedPending(farm, 5000);
  await farm.t.run(async (ctx: any) => {
    const T = async (label: string, f: () => Promise<unknown>) => { const t0 = performance.now(); const r = await f(); console.log(label, (performance.now() - t0).toFixed(1), "ms"); return r; };
    const lane = await T("lanes", () => ctx.db.query("lanes").first()) as any;
    const head = await T("head", () => ctx.db.query("jobs").withIndex("by_lane_ready", (q: any) => q.eq("laneId", lane._id).eq("queue", "ready")).first()) as any;
    await T("waiter", () => ctx.db.query("laneWaiters").withIndex("by_lane_since", (q: any) => q.eq("laneId", lane._id)).first());
    await T("patch job", () => ctx.db.patch(head._id, { queue: "offered" }));
    await T("schedule", () => ctx.scheduler.runAt(Date.now() + 5000, internal.dispatch.offerExpired, { jobId: head._id, workerId: workers[0].workerId }));
    await T("insert inbox", () => ctx.db.insert("inbox", { orgId: farm.orgId, workerId: workers[0].workerId, kind: "offer", jobId: head._id }));
    await T("head again", () => ctx.db.query("jobs").withIndex("by_lane_ready", (q: any) => q.eq("laneId", lane._id).eq("queue", "ready")).first());
    await T("head again2", () => ctx.db.query("jobs").withIndex("by_lane_ready", (q: any) => q.eq("laneId", lane._id).eq("queue", "ready")).first());
  });
}, 120_000);
