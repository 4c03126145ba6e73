import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MutationCtx } from "../../convex/_generated/server";
import { bumpLane, createLaneShards } from "../../convex/lanes/counters";
import { routingKey } from "../../convex/lanes/lanes";
import { classOf } from "../../convex/lanes/requirements";
import { routingCapabilities, typeCapability } from "../../convex/lanes/routing";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm } from "./appFarm";
import { eventKinds, inboxOf, jobRow, runDue } from "./queueState";
import { enrollWorker, runningJobs, expectCode, LAPTOP_FACTS, newFarm, refreshSummaries, snapshot, type Enrolled, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A worker as the engine runs it: it offers exactly these capabilities, and the farm allows them. */
const worker = (farm: Farm, name: string, capabilities: string[], maxConcurrentJobs = 2) =>
  enrollWorker(farm, { name, capabilities, types: [], maxConcurrentJobs, facts: LAPTOP_FACTS });

const claim = (farm: Farm, w: Enrolled, max = 4) => farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max });

/** The worker asks for work on an empty queue (so it waits in every lane it can serve) and is offered what comes. */
async function waiting(farm: Farm, w: Enrolled) {
  expect(await claim(farm, w)).toEqual([]);
}

describe("the rule", () => {
  test("app.<name> needs apps; every other type is its own capability, before its required ones", () => {
    expect(typeCapability("app.render")).toBe("apps");
    expect(typeCapability("demo.primes")).toBe("demo.primes");
    expect(typeCapability("recipe.wordcount")).toBe("recipe.wordcount");
    expect(typeCapability("ollama.generate")).toBe("ollama.generate");
    expect(routingCapabilities("ollama.chat", ["ollama:llama3"])).toEqual(["ollama.chat", "ollama:llama3"]);
    expect(routingCapabilities("app.render", ["apps", "gpu"])).toEqual(["apps", "gpu"]);
  });
});

describe("a job goes only to a worker that handles its type", () => {
  // type, its required capabilities, what a worker that runs it offers
  const families: [string, string[], string[]][] = [
    ["demo.primes", [], ["demo.echo", "demo.primes"]],
    ["recipe.wordcount", [], ["demo.echo", "recipe.wordcount"]],
    ["ollama.generate", ["ollama:llama3"], ["demo.echo", "ollama.generate", "ollama:llama3"]],
    ["ollama.chat", [], ["ollama.chat", "ollama:llama3"]],
  ];

  test.each(families)("%s: never offered to nor claimed by an echo-only worker; a worker that runs it gets it", async (type, requiredCapabilities, runs) => {
    const farm = await newFarm();
    const echo = await worker(farm, "echo-only", ["demo.echo", "ollama:llama3"]);
    await waiting(farm, echo);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type, requiredCapabilities, payload: { n: 10 } });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, echo.workerId)).toEqual([]);
    expect(await claim(farm, echo)).toEqual([]);
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");

    const able = await worker(farm, "able", runs);
    await farm.t.mutation(api.workers.ready, { apiKey: able.apiKey, capabilities: able.capabilities, slots: 1 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, able.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId })]);
    const [got] = await claim(farm, able);
    expect(got).toMatchObject({ jobId, type });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("app.<name>: an app job goes to a worker offering apps, never to one that only runs other types", async () => {
    const farm = await publishingFarm();
    expect((await publish(farm, "render", buildModule({ imports: [FD_WRITE] }), { query: "memoryMB=64&timeoutMs=5000" })).status).toBe(200);
    const echo = await worker(farm, "echo-only", ["demo.echo", "demo.primes"]);
    await waiting(farm, echo);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", payload: { tile: 1 } });
    expect((await farm.t.run(async (ctx) => await ctx.db.get((await ctx.db.get(jobId))!.laneId)))!.routingKey).toBe("apps|mem>=64");
    await runDue(farm.t);
    expect(await inboxOf(farm.t, echo.workerId)).toEqual([]);
    expect(await claim(farm, echo)).toEqual([]);
    const apps = await worker(farm, "apps", ["apps"]);
    const [got] = await claim(farm, apps);
    expect(got).toMatchObject({ jobId, type: "app.render" });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("required capabilities still count on top of the type: demo.primes needing gpu waits for a worker with both", async () => {
    const farm = await newFarm();
    const primesOnly = await worker(farm, "primes", ["demo.primes"]);
    const gpuEcho = await worker(farm, "gpu-echo", ["demo.echo", "gpu"]);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes", requiredCapabilities: ["gpu"] });
    expect(await claim(farm, primesOnly)).toEqual([]);
    expect(await claim(farm, gpuEcho)).toEqual([]);
    const both = await worker(farm, "both", ["demo.primes", "gpu"]);
    expect((await claim(farm, both)).map((c) => c.jobId)).toEqual([jobId]);
  });

  test("the server's grant bounds the types too: a worker advertising a type its enrollment does not allow never gets it", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["demo.echo"], capabilities: ["demo.echo", "demo.primes"], types: [] });
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes" });
    expect(await claim(farm, w)).toEqual([]);
    // the README's enrollment (both demo types) and a family grant both let a worker run what it handles
    const readme = await enrollWorker(farm, { name: "readme", allowed: ["demo.echo", "demo.primes"], capabilities: ["demo.echo", "demo.primes"], types: [] });
    expect(await claim(farm, readme)).toHaveLength(1);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "recipe.wordcount" });
    const family = await enrollWorker(farm, { name: "family", allowed: ["recipe.*"], capabilities: ["recipe.wordcount"], types: [] });
    expect(await claim(farm, family)).toHaveLength(1);
  });
});

describe("a wildcard grant is a dot-prefix", () => {
  test("granted recipe.*, a worker advertising recipes.x is never offered nor given a recipes.x job; recipe.y it runs", async () => {
    const farm = await newFarm();
    // through the public worker API: the operator's enrollment grants recipe.*, the engine advertises what it has
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: ["recipe.*"], maxConcurrentJobs: 2 });
    const advertised = ["recipe.y", "recipes.x"];
    const { apiKey, workerId } = await farm.t.mutation(api.workers.enroll, { token, name: "family", machineId: "m-family", capabilities: advertised, facts: LAPTOP_FACTS });
    expect(await farm.t.mutation(api.workers.ready, { apiKey, capabilities: advertised, slots: 2 })).toEqual({ waitingFor: 2 });
    const claimAll = () => farm.t.mutation(api.workers.claim, { apiKey, capabilities: advertised, max: 2 });

    const wrong = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "recipes.x" });
    await runDue(farm.t);
    expect((await farm.t.query(api.workers.doorbell, { apiKey })).offers).toEqual([]);
    expect(await claimAll()).toEqual([]);
    expect(await jobRow(farm.t, wrong)).toMatchObject({ status: "pending", attempt: 0 });

    // the same worker is offered and runs what the grant does allow, and still not the other
    const right = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "recipe.y" });
    await runDue(farm.t);
    expect((await farm.t.query(api.workers.doorbell, { apiKey })).offers.map((o) => o.jobId)).toEqual([right]);
    expect((await claimAll()).map((c) => [c.jobId, c.type])).toEqual([[right, "recipe.y"]]);
    await runDue(farm.t);
    expect(await inboxOf(farm.t, workerId)).toEqual([]);
    expect(await claimAll()).toEqual([]);
    expect(await jobRow(farm.t, wrong)).toMatchObject({ status: "pending", attempt: 0 });
    expect(await eventKinds(farm.t, wrong)).toEqual(["submitted"]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("a type nobody handles", () => {
  test("recipe.nosuch waits pending, untouched, then is offered to the first worker that declares it", async () => {
    const farm = await newFarm();
    const echo = await worker(farm, "echo-only", ["demo.echo", "demo.primes"]);
    await waiting(farm, echo);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "recipe.nosuch" });
    const submitted = await jobRow(farm.t, jobId);
    for (let i = 0; i < 5; i++) {
      await runDue(farm.t);
      expect(await claim(farm, echo)).toEqual([]);
      vi.advanceTimersByTime(60_000);
    }
    expect(await jobRow(farm.t, jobId)).toEqual(submitted);
    expect(await eventKinds(farm.t, jobId)).toEqual(["submitted"]);
    expect(await inboxOf(farm.t, echo.workerId)).toEqual([]);

    // the owner adds the recipe: the running engine declares its new capabilities and is offered the job
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: echo.workerId });
    const later = await enrollWorker(farm, { name: "with-recipe", allowed: ["demo.*", "recipe.*"], capabilities: ["demo.echo"], types: [] });
    await farm.t.mutation(api.workers.ready, { apiKey: later.apiKey, capabilities: ["demo.echo"], slots: 1 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, later.workerId)).toEqual([]);
    await farm.t.mutation(api.workers.ready, { apiKey: later.apiKey, capabilities: ["demo.echo", "recipe.nosuch"], slots: 1 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, later.workerId)).toEqual([expect.objectContaining({ kind: "offer", jobId })]);
    const [got] = await farm.t.mutation(api.workers.claim, { apiKey: later.apiKey, capabilities: ["demo.echo", "recipe.nosuch"] });
    expect(got).toMatchObject({ jobId, type: "recipe.nosuch", attempt: 1 });
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("the console's job page names what no online worker handles, until one does", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { name: "operator", canManage: true, capabilities: ["demo.echo"], types: [] });
    await waiting(farm, op);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "recipe.nosuch", requiredCapabilities: ["demo.echo"] });
    await refreshSummaries(farm.t);
    expect((await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId }))!.nobodyHandles).toEqual(["recipe.nosuch"]);
    const later = await worker(farm, "with-recipe", ["demo.echo", "recipe.nosuch"]);
    await farm.t.mutation(api.workers.ready, { apiKey: later.apiKey, capabilities: later.capabilities, slots: 1 });
    await refreshSummaries(farm.t);
    expect((await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId }))!.nobodyHandles).toEqual([]);
  });

  test.each(["Demo.Primes", "recipe nosuch", "a".repeat(65), "x/y"])("a type that cannot be a capability (%s) is refused and writes nothing", async (type) => {
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type }), "invalid_argument");
    await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "demo.echo" }, { type }] }), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
  });
});

/** Put every unfinished job back in the lane the previous version gave it (required capabilities only). */
async function plantOldLanes(farm: Farm) {
  await farm.t.run(async (raw) => {
    const ctx = raw as unknown as MutationCtx;
    for (const job of await ctx.db.query("jobs").collect()) {
      if (job.status !== "pending" && job.status !== "running") continue;
      const key = routingKey(job.requiredCapabilities, classOf(job.requirements));
      let lane = await ctx.db
        .query("lanes")
        .withIndex("by_org_key", (q) => q.eq("orgId", job.orgId).eq("routingKey", key))
        .unique();
      if (!lane) {
        const laneId = await ctx.db.insert("lanes", { orgId: job.orgId, routingKey: key, capabilities: job.requiredCapabilities });
        await createLaneShards(ctx, job.orgId, laneId);
        lane = (await ctx.db.get(laneId))!;
      }
      const counts = job.status === "pending" && job.queue !== "offered" ? "pending" : "running";
      // a lane move: the job's client key counts it as before
      await bumpLane(ctx, { ...job, keyCounted: false }, { [counts]: -1 });
      await ctx.db.patch(job._id, { laneId: lane._id });
      await bumpLane(ctx, { orgId: job.orgId, laneId: lane._id }, { [counts]: 1 });
    }
  });
}

describe("migrations:routeByType", () => {
  test("moves queued, delayed and running jobs of every org from the old lanes to their type's, in batches, and is idempotent", async () => {
    const alpha = await newFarm();
    const t = alpha.t;
    const farms = [alpha, await newFarm(t, "beta")];
    const primesJobs: Id<"jobs">[] = [];
    for (const farm of farms) {
      const jobs = Array.from({ length: 25 }, (_, i) => ({ type: i % 2 ? "demo.primes" : "demo.echo", payload: { n: i } }));
      primesJobs.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs })).filter((_, i) => i % 2));
      await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes", requiredCapabilities: ["gpu"], delayMs: 3_600_000 });
    }
    const runner = await worker(farms[0], "runner", ["demo.echo", "demo.primes"], 2);
    expect(await claim(farms[0], runner, 2)).toHaveLength(2);

    await plantOldLanes(farms[0]);
    const planted = await checkConsistency(t);
    expect(planted.filter((p) => p.includes("sits in the wrong lane"))).toHaveLength(2 * 26);
    // before the migration, an echo-only worker could take a demo.primes job from the old "" lane
    const oldLane = (await t.run(async (ctx) => await ctx.db.query("lanes").collect())).filter((l) => l.routingKey === "");
    expect(oldLane).toHaveLength(2);

    const first = await t.mutation(internal.migrations.routeByType, {});
    expect(first).toEqual({ moved: 20, done: false });
    await runDue(t, 12);
    expect(await checkConsistency(t)).toEqual([]);
    const echo = await worker(farms[0], "echo-only", ["demo.echo"], 32);
    const got = await claim(farms[0], echo, 32);
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((c) => c.type === "demo.echo")).toBe(true);
    expect(got.some((c) => primesJobs.includes(c.jobId))).toBe(false);
    // the running jobs finish on their new lane's counts
    for (const c of await runningJobs(farms[0].t, runner.apiKey)) {
      await t.mutation(api.workers.complete, { apiKey: runner.apiKey, leaseId: c.leaseId, result: 1 });
    }
    expect(await checkConsistency(t)).toEqual([]);

    const again = await t.mutation(internal.migrations.routeByType, {});
    expect(again.moved).toBe(0);
    await runDue(t, 12);
    const moves = await t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).length);
    await runDue(t, 12);
    expect(await t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).length)).toBe(moves);
    expect(await checkConsistency(t)).toEqual([]);
  });
});
