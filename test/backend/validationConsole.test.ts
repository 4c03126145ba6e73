import { describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { TRUST } from "../../convex/trust/validation";

import { enrollWorker, newFarm, type Farm, TEST_TYPES } from "./setup";
import { consistent, type Donor, donor, useReplicationClock } from "./validationDonors";

/** Replicated jobs (issue 20): what the console shows (trust on the Workers page, output per instance), and checkpoints. */

useReplicationClock();

const submit = (farm: Farm, type: string, quorum: number) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type, payload: {}, validation: { quorum } });

const claim = async (farm: Farm, worker: Donor) => await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });

/** The worker claims the job, writes `chunks` as its output, and completes it with `result`. */
async function run(farm: Farm, worker: Donor, jobId: Id<"jobs">, result: unknown, chunks: string[] = []) {
  const [lease] = await claim(farm, worker);
  expect(lease?.jobId, `${worker.name} should get the job`).toBe(jobId);
  for (const chunk of chunks) await farm.t.mutation(api.workers.output, { apiKey: worker.apiKey, leaseId: lease.leaseId, chunk });
  vi.advanceTimersByTime(1_000);
  return await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: lease.leaseId, result, cpuMs: 500 });
}

describe("console:workers shows each worker's trust", () => {
  test("its streaks lowest first, and its daily quota: full, or halved with today's claims", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const [honest, liar, third] = [await donor(farm, "honest"), await donor(farm, "liar"), await donor(farm, "third")];
    // type k: honest and liar agree (streak 1 each); type x: the liar disagrees with the other two
    const k = await submit(farm, "k", 2);
    await run(farm, honest, k, "ok");
    await run(farm, liar, k, "ok");
    const x = await submit(farm, "x", 2);
    await run(farm, liar, x, "wrong");
    await run(farm, honest, x, "right");
    expect(await run(farm, third, x, "right")).toEqual({ status: "succeeded" });

    const rows = async () => (await farm.t.query(api.console.workers, { apiKey: op.apiKey })).page;
    const trustOf = async (name: string) => (await rows()).find((w) => w.name === name)!.trust;
    expect(await trustOf("honest")).toEqual({
      streaks: [
        { type: "k", streak: 1, invalid: 0, trusted: false },
        { type: "x", streak: 1, invalid: 0, trusted: false },
      ],
      moreStreaks: false,
      quota: { limit: TRUST.dailyJobQuota, full: TRUST.dailyJobQuota, halvings: 0, lastDay: null },
    });
    // the liar: its lowest streak (x, reset) first, its quota halved; claims count from now on
    const liarTrust = await trustOf("liar");
    expect(liarTrust.streaks).toEqual([
      { type: "x", streak: 0, invalid: 1, trusted: false },
      { type: "k", streak: 1, invalid: 0, trusted: false },
    ]);
    expect(liarTrust.quota).toEqual({ limit: TRUST.dailyJobQuota / 2, full: TRUST.dailyJobQuota, halvings: 1, lastDay: null });
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    expect((await claim(farm, liar)).length).toBe(1);
    const today = Math.floor(Date.now() / 86_400_000);
    expect((await trustOf("liar")).quota.lastDay).toEqual({ day: today, claimed: 1 });
    // a worker with no checked result yet has no streak
    expect((await trustOf("op")).streaks).toEqual([]);
    await consistent(farm);
  });
});

describe("a replicated job's output is kept per instance", () => {
  test("each chunk carries the instance that wrote it; console:job and jobs:get show one section per instance", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const jobId = await submit(farm, "x", 2);
    await run(farm, a, jobId, 7, ["a says ", "hello\n"]);
    expect(await run(farm, b, jobId, 7, ["b says hi\n"])).toEqual({ status: "succeeded" });

    const chunks = await farm.t.run(async (ctx) => await ctx.db.query("jobOutput").withIndex("by_job_seq", (q) => q.eq("jobId", jobId)).collect());
    const instances = await farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect());
    const byWorker = new Map(instances.map((i) => [i._id, i.workerName]));
    expect(chunks.map((c) => [c.chunk, c.instance && byWorker.get(c.instance)])).toEqual([
      ["a says ", "a"],
      ["hello\n", "a"],
      ["b says hi\n", "b"],
    ]);
    const expected = [
      { instance: 1, round: 1, workerName: "a", text: "a says hello\n" },
      { instance: 2, round: 1, workerName: "b", text: "b says hi\n" },
    ];
    const page = (await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId }))!;
    expect(page.outputs).toEqual(expected);
    // the joined output is still there, in order
    expect(page.output.text).toBe("a says hello\nb says hi\n");
    expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.outputs).toEqual(expected);
  });

  test("a job that runs once tags nothing and has no per-instance sections", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const a = await donor(farm, "a");
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    await run(farm, a, jobId, 1, ["once\n"]);
    const [chunk] = await farm.t.run(async (ctx) => await ctx.db.query("jobOutput").withIndex("by_job_seq", (q) => q.eq("jobId", jobId)).collect());
    expect(chunk.instance).toBeUndefined();
    const page = (await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId }))!;
    expect(page.outputs).toBeUndefined();
    expect(page.output.text).toBe("once\n");
  });
});

describe("a replicated job's instances are independent", () => {
  test("no instance resumes from another's checkpoint: a replicated job keeps none", async () => {
    const farm = await newFarm();
    const [liar, honest] = [await donor(farm, "liar"), await donor(farm, "honest")];
    const jobId = await submit(farm, "x", 2);
    const [first] = await claim(farm, liar);
    // the liar saves a state that would make whoever resumes it return its wrong result
    expect(await farm.t.mutation(api.workers.checkpoint, { apiKey: liar.apiKey, leaseId: first.leaseId, data: btoa("answer=41") })).toEqual({ bytes: 9 });
    await farm.t.mutation(api.workers.complete, { apiKey: liar.apiKey, leaseId: first.leaseId, result: 41 });
    const [second] = await claim(farm, honest);
    expect(second.jobId).toBe(jobId);
    expect(second.checkpoint).toBeUndefined();
    expect(await farm.t.run(async (ctx) => await ctx.db.query("checkpoints").withIndex("by_job", (q) => q.eq("jobId", jobId)).unique())).toBeNull();
    await consistent(farm);
  });
});
