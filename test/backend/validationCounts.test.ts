import { describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { laneCounts, runDue } from "./queueState";
import { newFarm, overviewNow, type Farm, TEST_TYPES } from "./setup";
import { consistent, donor, instanceLease, submitReplicated, quorumTwoWithSpare, useReplicationClock } from "./validationDonors";

useReplicationClock();

/** The one lane's counts (every job here is of type "x"). */
async function lane(farm: Farm) {
  const lanes = Object.values(await laneCounts(farm));
  expect(lanes.length).toBe(1);
  return lanes[0];
}

describe("a lane counts a replicated job's running instances", () => {
  test("instance started: it counts as running, the job still wanting more as pending", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 3 });
    await instanceLease(farm, await donor(farm, "a"), jobId);
    expect(await lane(farm)).toEqual({ pending: 1, running: 1 });
    await consistent(farm);
  });

  test("every wanted instance running: each counts as running, the job itself as nothing; the overview agrees", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 3 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    for (const w of [a, b, c]) await instanceLease(farm, w, jobId);
    expect(await lane(farm)).toEqual({ pending: 0, running: 3 });
    const overview = await overviewNow(farm.t, a.apiKey);
    expect(overview.counts).toMatchObject({ pending: 0, running: 3 });
    expect(overview.lanes.map((l) => [l.pending, l.running])).toEqual([[0, 3]]);
    await consistent(farm);
  });

  test("an offered instance counts as running once: the offer, then the instance it becomes", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    await instanceLease(farm, a, jobId);
    await farm.t.mutation(api.workers.ready, { apiKey: b.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await runDue(farm.t);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: b.apiKey })).offers.map((o) => o.jobId)).toEqual([jobId]);
    expect(await lane(farm)).toEqual({ pending: 0, running: 2 });
    await consistent(farm);
    await instanceLease(farm, b, jobId);
    expect(await lane(farm)).toEqual({ pending: 0, running: 2 });
    await consistent(farm);
  });

  test("an instance returning a result stops counting; the job, waiting for the other one's result, counts nothing itself", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const la = await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 });
    expect(await lane(farm)).toEqual({ pending: 0, running: 1 });
    await consistent(farm);
  });

  test("a failed instance stops counting; the job wanting a replacement counts as pending", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const la = await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    await farm.t.mutation(api.workers.fail, { apiKey: a.apiKey, leaseId: la, error: "boom" });
    expect(await lane(farm)).toEqual({ pending: 1, running: 1 });
    await consistent(farm);
  });

  test("quorum reached: the job and its instances leave the lane's counts", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    const [la, lb] = [await instanceLease(farm, a, jobId), await instanceLease(farm, b, jobId)];
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 });
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 1 })).toEqual({ status: "succeeded" });
    expect(await lane(farm)).toEqual({ pending: 0, running: 0 });
    await consistent(farm);
  });

  test("cancel while instances run: every canceled instance leaves the lane's counts at once", async () => {
    const farm = await newFarm();
    const jobId: Id<"jobs"> = await submitReplicated(farm, { quorum: 3 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    expect(await lane(farm)).toEqual({ pending: 1, running: 2 });
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId });
    expect(await lane(farm)).toEqual({ pending: 0, running: 0 });
    await consistent(farm);
  });
});

describe("a donor's counts", () => {
  test("an instance canceled at quorum is counted apart: credited, neither a job done nor a failed attempt", async () => {
    const farm = await newFarm();
    const { a, b, c, la, lb, lc } = await quorumTwoWithSpare(farm);
    vi.advanceTimersByTime(2_000);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: "r", cpuMs: 1_000 });
    await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: "r", cpuMs: 1_000 });
    await farm.t.mutation(api.workers.fail, { apiKey: c.apiKey, leaseId: lc, error: "canceled", cpuMs: 800 });
    const credit = await farm.t.query(api.workers.myCredit, { apiKey: c.apiKey });
    for (const counts of [credit.week, credit.allTime]) {
      expect(counts).toEqual({ cpuHours: 800 / 3_600_000, wallHours: 0, jobs: 0, failed: 0, canceledAtQuorum: 1, energyJ: 0 });
    }
    expect((await farm.t.query(api.workers.myCredit, { apiKey: a.apiKey })).allTime).toMatchObject({ jobs: 1, failed: 0, canceledAtQuorum: 0 });
    await consistent(farm);
  });
});
