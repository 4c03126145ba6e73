import { expect, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { LIMITS } from "../../../convex/core/limits";
import { runDue } from "../queueState";
import { enrollWorker } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { atStep } from "./peaks";
import { BIG_TYPE, capsFarm, claim, claimAll, deadLetters, drain, fullBody, fullChunk, manager, submitBig } from "./world";

/**
 * The five cases issue 18 reproduced, through public and internal functions only: each threw on Convex's
 * limits before bodies moved beside the job and range reads got byte budgets.
 */

/** Three lanes of 32 ready jobs of 250 KiB, three workers waiting for 32 each: the dispatcher offers them all. */
export async function dispatcherOverBigLanes(): Promise<void> {
  const farm = await capsFarm();
  const lanes = ["a", "b", "c"];
  const workers = [];
  // lane i holds jobs of type lane-i requiring capability lanes[i]; its worker handles that type only
  for (const [i, cap] of lanes.entries()) {
    const w = await enrollWorker(farm, { name: `w-${cap}`, capabilities: [cap], types: [`lane-${i}`], maxConcurrentJobs: LIMITS.maxConcurrentJobs });
    expect(await claim(farm, w)).toEqual([]);
    workers.push(w);
  }
  for (const [i, cap] of lanes.entries()) {
    await submitBig(farm, 32, { bytes: 250 * 1024, requiredCapabilities: () => [cap], type: `lane-${i}` });
  }
  atStep("dispatch:run over 3 lanes of 32 × 250 KiB");
  await runDue(farm.t, 8);
  atStep("claims of offered 250 KiB jobs");
  for (const w of workers) {
    const held = await claimAll(farm, w, 32);
    expect(held).toHaveLength(32);
    expect(held.every((j) => typeof j.payload === "string" && j.payload.length > 250 * 1000)).toBe(true);
  }
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
  // a small job afterwards is offered at once
  const small = await enrollWorker(farm, { name: "small", capabilities: ["d"], types: ["small"] });
  expect(await claim(farm, small, 1)).toEqual([]);
  const id = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "small", requiredCapabilities: ["d"] });
  await runDue(farm.t);
  expect((await claim(farm, small, 1)).map((j) => j.jobId)).toEqual([id]);
}

/** 65 lanes each headed by a 256 KiB job; a worker that serves them all claims 32 from the heads. */
export async function claimHeadsOfBigLanes(): Promise<void> {
  const farm = await capsFarm();
  const caps = Array.from({ length: 65 }, (_, i) => `c${i}`);
  await submitBig(farm, 65, { requiredCapabilities: (i) => [caps[i]] });
  const w = await enrollWorker(farm, { capabilities: caps, types: [BIG_TYPE], maxConcurrentJobs: LIMITS.maxConcurrentJobs });
  atStep("workers:claim (heads path) over 65 lanes headed by 256 KiB jobs");
  const first = await claim(farm, w);
  // as many as the claim's byte budget holds; the rest wait for the next claim
  expect(first.length).toBeGreaterThan(0);
  expect(first.length).toBeLessThanOrEqual(LIMITS.claimMax);
  const bytes = first.reduce((n, j) => n + JSON.stringify(j.payload).length, 0);
  expect(bytes).toBeLessThanOrEqual(LIMITS.claimBodyBytes);
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** The console's job list over 100 jobs of 256 KiB: pages of 50 and of 100. */
export async function consolePageOfBigJobs(): Promise<void> {
  const farm = await capsFarm();
  await submitBig(farm, 100);
  const op = await manager(farm);
  atStep("console:jobs page of 50 / 100 big jobs");
  for (const numItems of [50, 100]) {
    const page = await farm.t.query(api.console.jobs, { apiKey: op.apiKey, filter: {}, paginationOpts: { numItems, cursor: null } });
    expect(page.page).toHaveLength(numItems);
  }
}

/** A bulk retry of 100 dead letters of 256 KiB with full errors: it finishes (done) and every one is pending again. */
export async function bulkRetryOfBigDeadLetters(): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  const ids = await deadLetters(farm, 100, op);
  atStep("consoleActions:bulk retry of 100 big dead letters");
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "retry", filter: { status: "dead" } });
  await drain(farm, "bulkStep");
  const status = await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId });
  expect(status).toMatchObject({ done: true, affected: 100 });
  atStep("seed");
  const rows = await farm.t.run(async (ctx) => await Promise.all(ids.map((id) => ctx.db.get(id))));
  expect(rows.every((r) => r?.status === "pending")).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** Ten finished jobs of 400 output chunks of 8 KiB each, past the retention age: the sweep deletes them all. */
export async function retentionOverBigOutput(): Promise<void> {
  const farm = await capsFarm();
  const w = await enrollWorker(farm, { types: [BIG_TYPE], maxConcurrentJobs: LIMITS.maxConcurrentJobs });
  const ids = await submitBig(farm, 10);
  const held = await claimAll(farm, w, 10);
  for (const job of held) {
    // a few chunks through the worker API, the rest written straight in (as 400 calls would)
    await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: job.leaseId, chunk: fullChunk(0) });
    await farm.t.run(async (ctx) => {
      for (let seq = 1; seq < 400; seq++) await ctx.db.insert("jobOutput", { orgId: farm.orgId, jobId: job.jobId, seq, chunk: fullChunk(seq) });
    });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: fullBody(`result-${job.jobId}`) });
  }
  vi.advanceTimersByTime(60_000);
  atStep("retention:sweep over 10 jobs × 400 chunks of 8 KiB");
  await farm.t.mutation(internal.retention.sweep, { olderThanMs: 1_000 });
  await drain(farm, "retention");
  atStep("seed");
  const left = await farm.t.run(async (ctx) => ({
    jobs: (await Promise.all(ids.map((id) => ctx.db.get(id)))).filter((j) => j !== null).length,
    chunks: (await ctx.db.query("jobOutput").take(1)).length,
    bodies: (await ctx.db.query("jobBodies").take(1)).length,
  }));
  expect(left).toEqual({ jobs: 0, chunks: 0, bodies: 0 });
  expect(await checkConsistency(farm.t)).toEqual([]);
}
