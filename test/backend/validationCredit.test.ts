import { describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { jobRow, laneCounts } from "./queueState";
import { newFarm, type Farm, TEST_TYPES } from "./setup";
import { consistent, donor, type Donor, instanceLease, quorumTwoWithSpare, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

// Credit as BOINC grants it: every valid instance the same, the least of the agreeing claims.

const complete = (farm: Farm, worker: Donor, leaseId: string, result: unknown, cpuMs: number) =>
  farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId, result, cpuMs });
const creditOf = (farm: Farm, worker: Donor) => farm.t.query(api.workers.myCredit, { apiKey: worker.apiKey });
const credits = (farm: Farm, jobId: Id<"jobs">) =>
  farm.t.run(async (ctx) =>
    (await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect()).map((r) => [r.workerName, r.credit, r.creditCpuMs]),
  );

describe("every valid instance is granted the least agreeing claim", () => {
  test("two agreeing results claiming 3,000 and 1,000 ms are each granted 1,000; the disagreeing one nothing", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b, liar] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "liar")];
    const [la, lliar] = [await instanceLease(farm, a, jobId), await instanceLease(farm, liar, jobId)];
    vi.advanceTimersByTime(4_000);
    await complete(farm, a, la, 42, 3_000);
    await complete(farm, liar, lliar, 41, 500);
    const lb = await instanceLease(farm, b, jobId);
    vi.advanceTimersByTime(4_000);
    expect(await complete(farm, b, lb, 42, 1_000)).toEqual({ status: "succeeded" });
    expect(await credits(farm, jobId)).toEqual([["a", "granted", 1_000], ["liar", "denied", 500], ["b", "granted", 1_000]]);
    for (const w of [a, b]) expect((await creditOf(farm, w)).allTime).toMatchObject({ cpuHours: 1_000 / 3_600_000, jobs: 1 });
    expect((await creditOf(farm, liar)).allTime).toMatchObject({ cpuHours: 0, jobs: 0 });
    await consistent(farm);
  });

  test("a claim is clamped before it is compared: a result claiming more than its wall time × cores counts as that", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const [la, lb] = [await instanceLease(farm, a, jobId), await instanceLease(farm, b, jobId)];
    vi.advanceTimersByTime(1_000);
    // a's laptop has 8 cores: 1 s of wall time holds at most 8,000 ms of CPU time
    await complete(farm, a, la, 1, 1_000_000);
    await complete(farm, b, lb, 1, 1_000_000);
    expect((await credits(farm, jobId)).map((c) => c[2])).toEqual([8_000, 8_000]);
    await consistent(farm);
  });
});

describe("spare instances (BOINC's target_nresults above the quorum)", () => {
  test("quorum 2 with spare 1 starts three instances side by side; a fourth worker gets none", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, spare: 1 });
    const [a, b, c, d] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c"), await donor(farm, "d")];
    await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready" });
    await instanceLease(farm, c, jobId);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "running" });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: d.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    expect(Object.values(await laneCounts(farm))).toEqual([{ pending: 0, running: 3 }]);
    await consistent(farm);
  });

  test("the spare still running when two agree is canceled at quorum and, once it reports, earns its CPU time up to the least agreeing claim", async () => {
    const farm = await newFarm();
    const { jobId, a, b, c, la, lb, lc } = await quorumTwoWithSpare(farm);
    vi.advanceTimersByTime(3_000);
    await complete(farm, a, la, "r", 2_500);
    expect(await complete(farm, b, lb, "r", 2_000)).toEqual({ status: "succeeded" });
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: c.apiKey, leaseId: lc })).toMatchObject({ cancel: true });
    await consistent(farm);
    expect(await farm.t.mutation(api.workers.fail, { apiKey: c.apiKey, leaseId: lc, error: "canceled", cpuMs: 2_900 })).toMatchObject({ status: "canceled" });
    expect(await credits(farm, jobId)).toEqual([["a", "granted", 2_000], ["b", "granted", 2_000], ["c", "granted", 2_000]]);
    const credit = await creditOf(farm, c);
    expect(credit.allTime).toMatchObject({ cpuHours: 2_000 / 3_600_000, jobs: 0, canceledAtQuorum: 1 });
    expect(credit.canceledAtQuorum).toEqual([{ jobId, type: "x", cpuHours: 2_000 / 3_600_000, credit: "granted" }]);
    await consistent(farm);
  });

  test("a disagreement with a spare running starts one more, so two run beside the results", async () => {
    const farm = await newFarm();
    const { jobId, a, b, la, lb } = await quorumTwoWithSpare(farm);
    await complete(farm, a, la, 1, 10);
    expect(await complete(farm, b, lb, 2, 10)).toEqual({ status: "pending" });
    // best group 1: quorum − 1 + spare 1 = 2 running wanted, 1 runs
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready" });
    await instanceLease(farm, await donor(farm, "d"), jobId);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "running" });
    await consistent(farm);
  });
});
