import { expect } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { LIMITS } from "../../../convex/core/limits";
import { LAPTOP_FACTS } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { seedOutput } from "./functions";
import { atStep } from "./peaks";
import { BIG_TYPE, capsFarm, fullBody, fullChunk, manager } from "./world";

/**
 * A replicated job whose round ended without a quorum, holding 10 distinct results of 256 KiB and a full page of
 * output written by its instances: every reader of it stays within the read budget (the results are kept beside
 * the instances, so no reader pays for them more than once).
 */
export async function noQuorumWithTenBigResults(): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  atStep("jobs:submit quorum 2, maxInstances 10, 256 KiB");
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: BIG_TYPE, payload: fullBody("one"), validation: { quorum: 2, maxInstances: 10 } });
  const instances: Array<Id<"jobInstances">> = [];
  for (let i = 0; i < 10; i++) {
    atStep("seed");
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [BIG_TYPE] });
    const w = await farm.t.mutation(api.workers.enroll, { token, name: `w${i}`, machineId: `m${i}`, capabilities: [BIG_TYPE], facts: LAPTOP_FACTS });
    atStep("workers:claim of an instance");
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [BIG_TYPE] });
    expect(lease.jobId).toBe(jobId);
    atStep("workers:output of an instance");
    await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: lease.leaseId, chunk: fullChunk(i) });
    atStep("workers:complete with a distinct 256 KiB result");
    const { status } = await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: lease.leaseId, result: fullBody(`result-${i}`) });
    expect(status).toBe(i < 9 ? "pending" : "dead");
    instances.push((await farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_lease", (q) => q.eq("leaseId", lease.leaseId)).unique()))!._id);
  }
  await seedOutput(farm, jobId, 10, LIMITS.outputChunksReturned + 10, "latin", instances);
  atStep("jobs:get of a no_quorum job with 10 distinct 256 KiB results");
  const view = (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;
  expect(view.validation).toMatchObject({ state: "no_quorum" });
  const results = (view.validation as { results: Array<{ result?: unknown }> }).results;
  expect(results.map((r) => r.result)).toEqual(Array.from({ length: 10 }, (_, i) => fullBody(`result-${i}`)));
  expect(view.outputs).toHaveLength(10);
  atStep("GET /api/jobs/:id?wait=5 (the long poll) of that job");
  const res = await farm.t.fetch(`/api/jobs/${jobId}?wait=5`, { headers: { authorization: `Bearer ${farm.clientKey}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { validation: { results: unknown[] } }).validation.results).toHaveLength(10);
  atStep("console:job of that job");
  expect(await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId })).toMatchObject({ validation: { state: "no_quorum" } });
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
  atStep("admin:purge of the job, its output and its 10 results");
  let purged = false;
  for (let calls = 0; !purged && calls < 20; calls++) purged = await farm.t.mutation(internal.admin.purge, { jobId });
  expect(purged).toBe(true);
  atStep("seed");
  expect(await farm.t.run(async (ctx) => await ctx.db.query("instanceResults").withIndex("by_job_hash", (q) => q.eq("jobId", jobId)).first())).toBeNull();
}
