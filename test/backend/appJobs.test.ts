import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm, remove, type PublishingFarm } from "./appFarm";
import { eventKinds, inboxOf, jobRow, laneCounts, runDue } from "./queueState";
import type { MachineFacts } from "../../convex/lanes/facts";
import { enrollWorker, runningJobs, expectCode, LAPTOP_FACTS, snapshot, type Enrolled } from "./setup";

const V1 = buildModule({ imports: [FD_WRITE] });
const V2 = buildModule({ imports: [FD_WRITE], memory: { min: 2 } });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function farmWithApp(): Promise<PublishingFarm> {
  const farm = await publishingFarm();
  expect((await publish(farm, "render", V1, { query: "memoryMB=64&timeoutMs=5000" })).status).toBe(200);
  return farm;
}

const submitApp = (
  farm: PublishingFarm,
  name = "render",
  extra: { requiredCapabilities?: string[]; priority?: number; requirements?: { minMemoryMB?: number; minCores?: number } } = {},
) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `app.${name}`, payload: { tile: 1 }, ...extra });

/** A worker that runs apps on a machine that reported these facts (null: reported none). */
const appsWorker = (farm: PublishingFarm, name = "donor", maxConcurrentJobs = 1, facts: MachineFacts | null = LAPTOP_FACTS) =>
  enrollWorker(farm, { allowed: ["apps", "demo.echo"], capabilities: ["apps", "demo.echo"], name, maxConcurrentJobs, ...(facts ? { facts } : {}) });

const withMemory = (memoryMB: number): MachineFacts => ({ ...LAPTOP_FACTS, memoryMB });

const claim = (farm: PublishingFarm, w: Enrolled, max = 1) => farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max });

describe("submitting an app job", () => {
  test("pins the app's latest live version on the job and requires the apps capability", async () => {
    const farm = await farmWithApp();
    const jobId = await submitApp(farm, "render", { requiredCapabilities: ["gpu"] });
    const row = await jobRow(farm.t, jobId);
    expect(row.app).toMatchObject({ name: "render", version: 1, memoryMB: 64, timeoutMs: 5000 });
    expect(row.app?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(row.requiredCapabilities).toEqual(["apps", "gpu"]);
    // a later version does not move a job already submitted; a new job gets the new one
    await publish(farm, "render", V2);
    expect((await jobRow(farm.t, jobId)).app?.version).toBe(1);
    const later = await submitApp(farm);
    expect((await jobRow(farm.t, later)).app).toMatchObject({ version: 2, memoryMB: 256, timeoutMs: 600_000 });
    // a deleted latest version: the newest live one is pinned
    await remove(farm, "render", 2, farm.publishKey);
    expect((await jobRow(farm.t, await submitApp(farm))).app?.version).toBe(1);
  });

  test("an unknown app is refused with not_found, a malformed name with invalid_argument, and nothing is written", async () => {
    const farm = await farmWithApp();
    const before = await snapshot(farm.t);
    await expectCode(submitApp(farm, "nope"), "not_found");
    await expectCode(submitApp(farm, "Bad_Name"), "invalid_argument");
    await expectCode(submitApp(farm, ""), "invalid_argument");
    // another org's app is unknown here
    const other = await publishingFarm(farm.t, "other");
    await expectCode(submitApp(other, "render"), "not_found");
    // every version deleted: nothing left to run
    await remove(farm, "render", 1, farm.publishKey);
    await expectCode(submitApp(farm), "not_found");
    const after = await snapshot(farm.t);
    expect(after.jobs).toEqual(before.jobs);
    expect(after.counterDeltas).toEqual(before.counterDeltas);
  });

  test("a batch with one unknown app is refused whole, naming the job", async () => {
    const farm = await farmWithApp();
    const jobs = [{ type: "app.render" }, { type: "demo.echo" }, { type: "app.missing" }];
    const error = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs }).catch((e: unknown) => e);
    const data = (error as { data: { code: string; message: string } }).data;
    expect(data.code).toBe("not_found");
    expect(data.message).toMatch(/^jobs\[2\]: .*missing/);
    expect((await snapshot(farm.t)).jobs).toEqual([]);
    const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: jobs.slice(0, 2) });
    expect((await jobRow(farm.t, ids[0])).app?.version).toBe(1);
    expect((await jobRow(farm.t, ids[1])).app).toBeUndefined();
  });

  test("over HTTP: pinned the same way; an unknown app is a 404 with code not_found", async () => {
    const farm = await farmWithApp();
    const post = (body: unknown) =>
      farm.t.fetch("/api/jobs", { method: "POST", headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const ok = await post({ type: "app.render", payload: { n: 1 } });
    expect(ok.status).toBe(201);
    const { jobId } = (await ok.json()) as { jobId: Id<"jobs"> };
    expect((await jobRow(farm.t, jobId)).app?.name).toBe("render");
    const missing = await post({ type: "app.ghost" });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const batch = await post({ jobs: [{ type: "app.render" }, { type: "app.ghost" }] });
    expect(batch.status).toBe(404);
  });
});

describe("routing app jobs", () => {
  test("only a worker allowed and offering apps claims one, and gets the pin with it", async () => {
    const farm = await farmWithApp();
    const jobId = await submitApp(farm);
    const facts = LAPTOP_FACTS;
    const notAllowed = await enrollWorker(farm, { allowed: ["demo.echo"], capabilities: ["demo.echo", "apps"], name: "not-allowed", facts });
    const notOffering = await enrollWorker(farm, { allowed: ["apps", "demo.echo"], capabilities: ["demo.echo"], name: "not-offering", facts });
    expect(await claim(farm, notAllowed)).toEqual([]);
    expect(await claim(farm, notOffering)).toEqual([]);
    const donor = await appsWorker(farm);
    const [got] = await claim(farm, donor);
    expect(got).toMatchObject({ jobId, type: "app.render", payload: { tile: 1 }, app: (await jobRow(farm.t, jobId)).app });
    expect(got.checkpoint).toBeUndefined();
  });

  test("the dispatcher offers app jobs only to waiting workers that run apps, in strict order", async () => {
    const farm = await farmWithApp();
    const plain = await enrollWorker(farm, { allowed: ["demo.echo"], capabilities: ["demo.echo"], name: "plain", facts: LAPTOP_FACTS });
    expect(await claim(farm, plain)).toEqual([]);
    vi.advanceTimersByTime(5);
    const donor = await appsWorker(farm);
    expect(await claim(farm, donor)).toEqual([]);
    const first = await submitApp(farm);
    const urgent = await submitApp(farm, "render", { priority: 5 });
    await runDue(farm.t);
    expect(await inboxOf(farm.t, plain.workerId)).toEqual([]);
    const offers = await inboxOf(farm.t, donor.workerId);
    expect(offers.map((o) => o.jobId)).toEqual([urgent]);
    const [got] = await claim(farm, donor);
    expect(got).toMatchObject({ jobId: urgent, app: { name: "render", version: 1 } });
    expect((await jobRow(farm.t, first)).status).toBe("pending");
  });

  test("a job pinned to a deleted version is dead-lettered with the reason when claimed, counters consistent", async () => {
    const farm = await farmWithApp();
    const doomed = await submitApp(farm);
    await publish(farm, "render", V2);
    const fine = await submitApp(farm);
    await remove(farm, "render", 1, farm.publishKey);
    const donor = await appsWorker(farm, "donor", 2);
    const got = await claim(farm, donor, 2);
    expect(got.map((j) => j.jobId)).toEqual([fine]);
    const dead = await jobRow(farm.t, doomed);
    expect(dead.status).toBe("dead");
    expect(dead.error).toMatch(/app "render" v1 was deleted/);
    expect(await eventKinds(farm.t, doomed)).toEqual(["submitted", "dead"]);
    expect(await laneCounts(farm)).toEqual({ "apps|mem>=64": { pending: 0, running: 0 }, "apps|mem>=256": { pending: 0, running: 1 } });
    const slots = await farm.t.run(async (ctx) => await ctx.db.query("workerSlots").collect());
    expect(slots.map((s) => s.running)).toEqual([1]);
  });

  test("an offered job whose version was deleted meanwhile is dead-lettered at claim and the slot is wanted again", async () => {
    const farm = await farmWithApp();
    const donor = await appsWorker(farm);
    expect(await claim(farm, donor)).toEqual([]);
    const doomed = await submitApp(farm);
    await runDue(farm.t);
    expect((await inboxOf(farm.t, donor.workerId)).map((o) => o.jobId)).toEqual([doomed]);
    await remove(farm, "render", 1, farm.publishKey);
    expect(await claim(farm, donor)).toEqual([]);
    expect((await jobRow(farm.t, doomed)).status).toBe("dead");
    expect(await inboxOf(farm.t, donor.workerId)).toEqual([]);
    expect(await laneCounts(farm)).toEqual({ "apps|mem>=64": { pending: 0, running: 0 } });
    const waiter = await farm.t.run(async (ctx) => await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", donor.workerId)).unique());
    expect(waiter?.wants).toBe(1);
  });

  test("a running app job names its app and version", async () => {
    const farm = await farmWithApp();
    await submitApp(farm);
    const donor = await appsWorker(farm);
    await claim(farm, donor);
    const [mine] = await runningJobs(farm.t, donor.apiKey);
    expect(mine).toMatchObject({ type: "app.render", app: { name: "render", version: 1 } });
  });

  test("an operator's retry of such a dead letter dead-letters it again at the next claim, with the reason", async () => {
    const farm = await farmWithApp();
    const jobId = await submitApp(farm);
    await remove(farm, "render", 1, farm.publishKey);
    const donor = await appsWorker(farm);
    await claim(farm, donor);
    await farm.t.mutation(internal.admin.retryDead, { jobId });
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");
    vi.advanceTimersByTime(10_000);
    expect(await claim(farm, donor)).toEqual([]);
    expect((await jobRow(farm.t, jobId)).status).toBe("dead");
  });
});

describe("an app's memoryMB is its job's memory requirement", () => {
  async function farmWithBigApp(): Promise<PublishingFarm> {
    const farm = await publishingFarm();
    expect((await publish(farm, "big", V1, { query: "memoryMB=2048" })).status).toBe(200);
    return farm;
  }

  test("the job carries minMemoryMB = the version's memoryMB and is laned by that class", async () => {
    const farm = await farmWithBigApp();
    const jobId = await submitApp(farm, "big");
    expect((await jobRow(farm.t, jobId)).requirements).toEqual({ minMemoryMB: 2048 });
    expect(await laneCounts(farm)).toEqual({ "apps|mem>=2048": { pending: 1, running: 0 } });
    expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ requirements: { minMemoryMB: 2048 } });
  });

  test("a worker reporting 1024 MB is neither offered nor able to claim it; one reporting 4096 MB is, and gets the requirement", async () => {
    const farm = await farmWithBigApp();
    const small = await appsWorker(farm, "small", 1, withMemory(1024));
    expect(await claim(farm, small)).toEqual([]);
    vi.advanceTimersByTime(5);
    const large = await appsWorker(farm, "large", 1, withMemory(4096));
    expect(await claim(farm, large)).toEqual([]);
    const jobId = await submitApp(farm, "big");
    await runDue(farm.t);
    // the small machine waited first, yet the offer goes to the one with the memory
    expect(await inboxOf(farm.t, small.workerId)).toEqual([]);
    expect((await inboxOf(farm.t, large.workerId)).map((o) => o.jobId)).toEqual([jobId]);
    expect(await claim(farm, small)).toEqual([]);
    expect((await jobRow(farm.t, jobId)).status).toBe("pending");
    const [got] = await claim(farm, large);
    expect(got).toMatchObject({ jobId, requirements: { minMemoryMB: 2048 }, app: { name: "big", memoryMB: 2048 } });
    expect(await laneCounts(farm)).toEqual({ "apps|mem>=2048": { pending: 0, running: 1 } });
  });

  test("a worker that reported no facts claims no app job", async () => {
    const farm = await farmWithApp();
    await submitApp(farm);
    const unknown = await appsWorker(farm, "unknown", 1, null);
    expect(await claim(farm, unknown)).toEqual([]);
    await farm.t.mutation(api.workers.reportFacts, { apiKey: unknown.apiKey, facts: LAPTOP_FACTS });
    expect(await claim(farm, unknown)).toHaveLength(1);
  });

  test("a submitter's larger minMemoryMB wins, a smaller one gives way to the app's, other requirements are kept", async () => {
    const farm = await farmWithBigApp();
    const larger = await submitApp(farm, "big", { requirements: { minMemoryMB: 8000, minCores: 4 } });
    const smaller = await submitApp(farm, "big", { requirements: { minMemoryMB: 100, minCores: 2 } });
    expect((await jobRow(farm.t, larger)).requirements).toEqual({ minMemoryMB: 8000, minCores: 4 });
    expect((await jobRow(farm.t, smaller)).requirements).toEqual({ minMemoryMB: 2048, minCores: 2 });
    expect(Object.keys(await laneCounts(farm)).sort()).toEqual(["apps|mem>=2048,cores>=2", "apps|mem>=8192,cores>=4"]);
    // a 4 GB machine runs the one that needs the app's 2 GB, never the 8 GB one
    const fourGB = await appsWorker(farm, "four", 2, withMemory(4096));
    const got = await claim(farm, fourGB, 2);
    expect(got.map((j) => j.jobId)).toEqual([smaller]);
    expect((await jobRow(farm.t, larger)).status).toBe("pending");
  });

  test("a bad minMemoryMB on an app job is refused like any other, and nothing is written", async () => {
    const farm = await farmWithBigApp();
    const before = await snapshot(farm.t);
    await expectCode(submitApp(farm, "big", { requirements: { minMemoryMB: 0.5 } }), "invalid_argument");
    expect((await snapshot(farm.t)).jobs).toEqual(before.jobs);
  });
});
