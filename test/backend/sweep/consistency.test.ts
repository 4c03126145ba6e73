import { expect, test } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { enrollWorker, newFarm } from "../setup";
import { checkConsistency } from "./consistency";

/** The checker itself: silent on a healthy farm, loud on each kind of damage. */
test("the consistency check passes a healthy farm and names each broken invariant", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm, { capabilities: ["cpu"] });
  const pending = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["cpu"] });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["cpu"] });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
  await farm.t.mutation(api.workers.output, { apiKey: worker.apiKey, leaseId: claim.leaseId, chunk: "x" });
  expect(await checkConsistency(farm.t)).toEqual([]);

  await farm.t.run(async (ctx) => {
    const shard = (await ctx.db.query("laneShards").first())!;
    await ctx.db.patch(shard._id, { pending: shard.pending + 1 });
    await ctx.db.patch(claim.jobId, { leaseId: undefined });
    const other = pending === claim.jobId ? undefined : pending;
    if (other) await ctx.db.patch(other, { status: "succeeded" });
    await ctx.db.insert("jobOutput", { orgId: farm.orgId, jobId: claim.jobId, seq: 5, chunk: "gap" });
  });
  const problems = (await checkConsistency(farm.t)).join("\n");
  expect(problems).toMatch(/lane "cpu,x" counts \d+ pending, really \d+/);
  expect(problems).toMatch(/has no lease/);
  expect(problems).toMatch(/output sequence has gaps/);
  expect(problems).toMatch(/running job .* has no lease check scheduled|has no lease/);
});

test("the check names a client key's counters that are off, a limit count off, and a pass of a missing key", async () => {
  const farm = await newFarm();
  const ci = (await farm.t.run(async (ctx) => await ctx.db.query("clientKeys").first()))!;
  await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId: ci._id, maxRunning: 2, fairnessWeights: [{ fairnessKey: "gold", weight: 2 }] });
  const worker = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x" }, { type: "x", fairnessKey: "gold" }, { type: "x" }] });
  await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities, max: 4 });
  expect(await checkConsistency(farm.t)).toEqual([]);
  await farm.t.run(async (ctx) => {
    await ctx.db.insert("counterDeltas", { orgId: farm.orgId, clientKeyId: ci._id, pending: 1 });
    const running = (await ctx.db.query("keyRunning").first())!;
    await ctx.db.patch(running._id, { running: running.running - 1 });
    await ctx.db.patch(ci._id, { fairnessOverrides: 3 });
    const other = await ctx.db.insert("clientKeys", { orgId: farm.orgId, name: "gone", keyHash: "h", keyPrefix: "p", revoked: true });
    await ctx.db.delete(other);
    await ctx.db.insert("fairPasses", { orgId: farm.orgId, negPriority: 0, scope: "key", clientKeyId: other, pass: 1, at: 0 });
  });
  const problems = (await checkConsistency(farm.t)).join("\n");
  expect(problems).toMatch(/client key "ci" counts 2 pending, really 1/);
  expect(problems).toMatch(/client key "ci" \(maxRunning 2\) counts 1 running for its limit, really 2/);
  expect(problems).toMatch(/client key "ci" says 3 fairness weights, has 1/);
  expect(problems).toMatch(/fair pass .* names a client key of another org or none/);
});
