import { describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { TIMING } from "../../convex/core/limits";
import { jobRow, laneCounts, runDue } from "./queueState";
import { newFarm, type Farm, TEST_TYPES } from "./setup";
import { consistent, type Donor, donor, instanceLease, pastBackoff, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

const claim = (farm: Farm, worker: Donor) => farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
const fail = (farm: Farm, worker: Donor, leaseId: string) => farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId, error: "boom" });
const events = (farm: Farm, jobId: Id<"jobs">) =>
  farm.t.run(async (ctx) => (await ctx.db.query("jobEvents").collect()).filter((e) => e.jobId === jobId).map((e) => ({ kind: e.kind, backoffMs: e.backoffMs })));

describe("a failed instance waits the job's retry backoff before another starts", () => {
  test("failed: the job is delayed by a single job's first backoff, its other instance running on; no instance starts meanwhile", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const la = await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    const failedAt = Date.now();
    const out = await fail(farm, a, la);
    expect(out.status).toBe("pending");
    const delay = out.availableAt! - failedAt;
    expect(delay).toBeGreaterThanOrEqual(TIMING.backoffBaseMs / 2);
    expect(delay).toBeLessThanOrEqual(TIMING.backoffBaseMs);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "delayed", attempt: 0, error: "boom" });
    expect((await events(farm, jobId)).slice(-1)).toEqual([{ kind: "retried", backoffMs: delay }]);
    expect(Object.values(await laneCounts(farm))).toEqual([{ pending: 1, running: 1 }]);
    vi.advanceTimersByTime(out.availableAt! - Date.now() - 1);
    await farm.t.finishInProgressScheduledFunctions();
    expect(await claim(farm, c)).toEqual([]);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "delayed" });
    await consistent(farm);
  });

  test("backoff over: the job is ready again and the next instance starts, on another machine", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const la = await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    await fail(farm, a, la);
    await pastBackoff(farm, jobId);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready" });
    await consistent(farm);
    // the worker that failed it does not get it again
    expect(await claim(farm, a)).toEqual([]);
    await instanceLease(farm, c, jobId);
    expect((await jobRow(farm.t, jobId)).status).toBe("running");
    await consistent(farm);
  });

  test("a second failed instance (on another worker) waits longer, as a single job's second retry does", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await instanceLease(farm, b, jobId);
    await fail(farm, a, await instanceLease(farm, a, jobId));
    await pastBackoff(farm, jobId);
    const failedAt = Date.now();
    const out = await fail(farm, c, await instanceLease(farm, c, jobId));
    const delay = out.availableAt! - failedAt;
    expect(delay).toBeGreaterThanOrEqual(TIMING.backoffBaseMs);
    expect(delay).toBeLessThanOrEqual(TIMING.backoffBaseMs * 2);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ queue: "delayed", attempt: 0 });
    await consistent(farm);
  });

  test("an instance failing while the job is offered to another worker: the offer is withdrawn and that worker waits again", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 3 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const la = await instanceLease(farm, a, jobId);
    await instanceLease(farm, b, jobId);
    await farm.t.mutation(api.workers.ready, { apiKey: c.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await runDue(farm.t);
    expect((await jobRow(farm.t, jobId))).toMatchObject({ queue: "offered", workerId: c.workerId });
    await fail(farm, a, la);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "delayed" });
    expect((await farm.t.query(api.workers.doorbell, { apiKey: c.apiKey })).offers).toEqual([]);
    expect(Object.values(await laneCounts(farm))).toEqual([{ pending: 1, running: 1 }]);
    await consistent(farm);
  });

  test("the running instance returning its result while the job waits: the job stays delayed, then wants one more", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    const la = await instanceLease(farm, a, jobId);
    const lb = await instanceLease(farm, b, jobId);
    await fail(farm, a, la);
    expect(await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 1 })).toEqual({ status: "pending" });
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "delayed" });
    await consistent(farm);
    await pastBackoff(farm, jobId);
    await instanceLease(farm, c, jobId);
    expect((await jobRow(farm.t, jobId)).status).toBe("running");
    await consistent(farm);
  });
});
