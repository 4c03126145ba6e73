// What fair share accepts and shows: a job's fairness key (jobs:submit, jobs:submitBatch, HTTP), a client key's
// limits (admin:setClientKeyLimits, consoleAccess:setClientKeyLimits); bad input is refused with a stable code and
// changes nothing.
import { describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { FAIR } from "../../convex/queue/fairLimits";
import { FarmhandClient } from "../../extension/sdk/client";
import type { Transport } from "../../extension/sdk/transport";
import { answerOf, enrollWorker, expectCode, newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

async function fairRows(farm: Farm) {
  return await farm.t.run(async (ctx) => ({
    jobs: await ctx.db.query("jobs").collect(),
    clientKeys: await ctx.db.query("clientKeys").collect(),
    fairnessWeights: await ctx.db.query("fairnessWeights").collect(),
    keyRunning: await ctx.db.query("keyRunning").collect(),
  }));
}

async function operatorKey(farm: Farm) {
  return (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" })).key;
}

async function jobOf(farm: Farm, jobId: Id<"jobs">) {
  const view = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
  if (!view) throw new Error(`no job ${jobId}`);
  return view;
}

const clientKeyIdOf = async (farm: Farm): Promise<Id<"clientKeys">> => (await farm.t.run(async (ctx) => await ctx.db.query("clientKeys").first()))!._id;

describe("a job's fairness key", () => {
  test("up to 64 bytes (UTF-8) through jobs:submit, jobs:submitBatch and POST /api/jobs; jobs:get shows it with its client key", async () => {
    const farm = await newFarm();
    const longest = "é".repeat(32); // 64 bytes
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", fairnessKey: longest });
    expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ clientKey: "ci", fairnessKey: longest, waitReason: null });
    const [batched] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x", fairnessKey: "tenant-7" }] });
    expect((await jobOf(farm, batched)).fairnessKey).toBe("tenant-7");
    const res = await farm.t.fetch("/api/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "x", fairnessKey: "user-42" }),
    });
    expect(res.status).toBe(201);
    const viaHttp = (await answerOf(res)).jobId as Id<"jobs">;
    expect((await jobOf(farm, viaHttp)).fairnessKey).toBe("user-42");
    // a host app's own job (submitJob, no client key) counts against no key
    const own = await farm.t.run(async (ctx) => (await import("../../convex/queue/submit")).submitJob(ctx, { orgId: farm.orgId, type: "x" }));
    expect((await jobOf(farm, own)).clientKey).toBeNull();
  });

  test("the SDK's submit, submitMany and map hand a spec's fairnessKey to the farm", async () => {
    const farm = await newFarm();
    const t = farm.t as unknown as Record<"mutation" | "query", (ref: unknown, args: unknown) => Promise<unknown>>;
    const transport = {
      mutation: (ref: unknown, args: unknown) => t.mutation(ref, args),
      query: (ref: unknown, args: unknown) => t.query(ref, args),
      onUpdate: () => () => undefined,
      close: () => Promise.resolve(),
    } as unknown as Transport;
    const sdk = new FarmhandClient({ client: transport, clientKey: farm.clientKey });
    const one = await sdk.submit({ type: "x", fairnessKey: "user-1" });
    const many = await sdk.submitMany([{ type: "x", fairnessKey: "user-2" }, { type: "x" }]);
    // map submits its first chunk before it waits for any result
    const mapped = sdk.map("x", [1], { spec: { fairnessKey: "user-3" } })[Symbol.asyncIterator]();
    void mapped.next();
    await vi.waitFor(async () => expect(await farm.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).length)).toBe(4));
    const keys = await farm.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).map((j) => [j._id, j.fairnessKey ?? null]));
    expect(keys).toEqual([
      [one, "user-1"],
      [many[0], "user-2"],
      [many[1], null],
      [expect.any(String), "user-3"],
    ]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("empty or over 64 bytes is refused, naming the batch's job, and nothing is written", async () => {
    const farm = await newFarm();
    const before = await fairRows(farm);
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", fairnessKey: "" }), "invalid_argument");
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", fairnessKey: "k".repeat(65) }), "too_large");
    // bytes, not characters: 22 three-byte characters are 66 bytes
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", fairnessKey: "€".repeat(22) }), "too_large");
    const batch = farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x", fairnessKey: "ok" }, { type: "x", fairnessKey: "k".repeat(65) }] });
    await expect(batch).rejects.toThrow(/jobs\[1\]: fairnessKey is 65 bytes/);
    expect(await fairRows(farm)).toEqual(before);
  });
});

describe("a client key's limits", () => {
  test("are set field by field, shown on the access list, and put back to the default with null", async () => {
    const farm = await newFarm();
    const apiKey = await operatorKey(farm);
    const clientKeyId = await clientKeyIdOf(farm);
    expect(await farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey, clientKeyId, weight: 2.5, maxRunning: 20 })).toMatchObject({
      weight: 2.5,
      maxRunning: 20,
      fairnessWeights: 0,
      running: 0,
    });
    await farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey, clientKeyId, fairnessWeights: [{ fairnessKey: "gold", weight: 4 }, { fairnessKey: "free", weight: 0.5 }] });
    const [listed] = (await farm.t.query(api.consoleAccess.list, { apiKey })).clientKeys;
    expect(listed).toMatchObject({ weight: 2.5, maxRunning: 20, fairnessWeights: 2 });
    expect(await farm.t.query(api.consoleAccess.fairnessWeights, { apiKey, clientKeyId })).toEqual([
      { fairnessKey: "free", weight: 0.5 },
      { fairnessKey: "gold", weight: 4 },
    ]);
    expect(await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId, weight: null, maxRunning: null, fairnessWeights: null })).toMatchObject({
      weight: 1,
      maxRunning: null,
      fairnessWeights: 0,
      running: null,
    });
    expect(await farm.t.query(api.consoleAccess.fairnessWeights, { apiKey, clientKeyId })).toEqual([]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("bad values, unknown keys and other orgs' keys are refused and change nothing", async () => {
    const farm = await newFarm();
    const apiKey = await operatorKey(farm);
    const clientKeyId = await clientKeyIdOf(farm);
    const other = await newFarm(farm.t, "other");
    const theirs = (await farm.t.run(async (ctx) => (await ctx.db.query("clientKeys").collect()).find((k) => k.orgId === other.orgId)))!._id;
    const before = await fairRows(farm);
    const set = (limits: Record<string, unknown>, id: string = clientKeyId) =>
      farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey, clientKeyId: id, ...limits });
    for (const weight of [0, 0.0009, 1001, Number.NaN, Number.POSITIVE_INFINITY]) await expectCode(set({ weight }), "invalid_argument");
    for (const maxRunning of [-1, 2.5, FAIR.maxRunningMax + 1]) await expectCode(set({ maxRunning }), "invalid_argument");
    const tooMany = Array.from({ length: FAIR.fairnessWeightsPerKey + 1 }, (_, i) => ({ fairnessKey: `u${i}`, weight: 1 }));
    await expectCode(set({ fairnessWeights: tooMany }), "invalid_argument");
    await expectCode(set({ fairnessWeights: [{ fairnessKey: "a", weight: 1 }, { fairnessKey: "a", weight: 2 }] }), "invalid_argument");
    await expectCode(set({ fairnessWeights: [{ fairnessKey: "a", weight: 5000 }] }), "invalid_argument");
    await expectCode(set({ fairnessWeights: [{ fairnessKey: "k".repeat(65), weight: 1 }] }), "too_large");
    // a bad field refuses the whole call: the good one beside it is not applied
    await expectCode(set({ weight: 2, maxRunning: -1 }), "invalid_argument");
    await expectCode(set({ weight: 2 }, theirs), "not_found");
    await expectCode(set({ weight: 2 }, "not-an-id"), "not_found");
    const worker = await enrollWorker(farm);
    await expectCode(farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey: worker.apiKey, clientKeyId, weight: 2 }), "forbidden");
    await expectCode(farm.t.query(api.consoleAccess.fairnessWeights, { apiKey, clientKeyId: theirs }), "not_found");
    const after = await fairRows(farm);
    expect(after.clientKeys).toEqual(before.clientKeys);
    expect([after.fairnessWeights, after.keyRunning]).toEqual([before.fairnessWeights, before.keyRunning]);
  });

  test("1,000 fairness weights fit one call, and replace the ones set before", async () => {
    const farm = await newFarm();
    const clientKeyId = await clientKeyIdOf(farm);
    const many = Array.from({ length: FAIR.fairnessWeightsPerKey }, (_, i) => ({ fairnessKey: `tenant-${String(i).padStart(4, "0")}`, weight: 1 + (i % 7) }));
    expect((await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId, fairnessWeights: many })).fairnessWeights).toBe(1000);
    expect((await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId, fairnessWeights: many.slice(0, 3) })).fairnessWeights).toBe(3);
    expect(await farm.t.run(async (ctx) => (await ctx.db.query("fairnessWeights").collect()).length)).toBe(3);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});
