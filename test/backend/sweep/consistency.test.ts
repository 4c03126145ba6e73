import { expect, test } from "vitest";
import { api } from "../../../convex/_generated/api";
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
