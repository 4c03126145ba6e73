import { describe, expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MachineFacts } from "../../convex/lanes/facts";
import { enrollWorker, expectCode, newFarm, snapshot, type Farm } from "./setup";

const FACTS: MachineFacts = { cores: 16, memoryMB: 64_000, os: "linux", arch: "x64", gpus: [{ vendor: "nvidia", model: "RTX 4090", vramMB: 24_564 }] };

async function newToken(farm: Farm) {
  return (await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], maxConcurrentJobs: 2 })).token;
}

async function enrollWith(farm: Farm, facts?: MachineFacts, token?: string) {
  token ??= await newToken(farm);
  return await farm.t.mutation(api.workers.enroll, { token, name: "gpu box", machineId: "m", capabilities: [], ...(facts ? { facts } : {}) });
}

const factsOf = (farm: Farm, workerId: Id<"workers">) => farm.t.run(async (ctx) => (await ctx.db.get(workerId))?.facts ?? null);

describe("machine facts", () => {
  test("enroll keeps the facts a worker measured; an older worker enrolls without any", async () => {
    const farm = await newFarm();
    const withFacts = await enrollWith(farm, FACTS);
    expect(await factsOf(farm, withFacts.workerId)).toEqual(FACTS);
    const without = await enrollWith(farm);
    expect(await factsOf(farm, without.workerId)).toBeNull();
  });

  test("reportFacts writes only when they changed, and the console's workers page shows them", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    expect(await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: FACTS })).toEqual({ changed: true });
    const before = await snapshot(farm.t);
    expect(await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: FACTS })).toEqual({ changed: false });
    expect((await snapshot(farm.t)).workers).toEqual(before.workers);
    const more = { ...FACTS, gpus: [...FACTS.gpus, { vendor: "nvidia" as const, model: "RTX 4090", vramMB: 24_564 }] };
    expect(await farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: more })).toEqual({ changed: true });
    expect(await factsOf(farm, w.workerId)).toEqual(more);
    // per-worker detail is the console's (the summary stays small at any number of workers)
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const { page } = await farm.t.query(api.console.workers, { apiKey: op.apiKey });
    expect(page.find((x) => x.workerId === w.workerId)?.facts).toEqual(more);
  });

  test.each<[string, Partial<MachineFacts>, string]>([
    ["no cores", { cores: 0 }, "facts.cores must be a whole number from 1"],
    ["fractional memory", { memoryMB: 1.5 }, "facts.memoryMB must be a whole number"],
    ["empty os", { os: " " }, "facts.os must be text"],
    ["negative VRAM", { gpus: [{ vendor: "amd", model: "MI300", vramMB: -1 }] }, "facts.gpus[0].vramMB must be a whole number"],
    ["too many GPUs", { gpus: Array.from({ length: 17 }, () => ({ vendor: "other" as const, model: "x", vramMB: 1 })) }, "facts.gpus: at most 16"],
  ])("refuses bad facts (%s) with invalid_argument, at enroll and on report, writing nothing", async (_name, change, message) => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const token = await newToken(farm);
    const before = await snapshot(farm.t);
    const bad = { ...FACTS, ...change };
    await expectCode(farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: bad }), "invalid_argument");
    await expect(farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: bad })).rejects.toThrow(message);
    await expectCode(enrollWith(farm, bad, token), "invalid_argument");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("reportFacts refuses a bad or revoked key", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await expectCode(farm.t.mutation(api.workers.reportFacts, { apiKey: "fh_w_unknown", facts: FACTS }), "bad_key");
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: w.workerId });
    await expectCode(farm.t.mutation(api.workers.reportFacts, { apiKey: w.apiKey, facts: FACTS }), "revoked");
  });
});
