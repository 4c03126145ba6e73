import { describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { fixedDeadlineMs } from "../../convex/trust/instanceDeadline";
import { addRun, MIN_RUNS, p95RunMs } from "../../convex/observability/runTimes";
import { TRUST } from "../../convex/trust/validation";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm } from "./appFarm";
import { jobRow, runDue } from "./queueState";
import { LAPTOP_FACTS, newFarm, refreshSummaries, type Farm, TEST_TYPES } from "./setup";
import { consistent, donor, type Donor, instanceLease, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

// Stragglers have a deadline (BOINC's delay bound): past it a replacement starts while the straggler runs on.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

const statuses = (farm: Farm, jobId: Id<"jobs">) =>
  farm.t.run(async (ctx) => (await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect()).map((r) => [r.workerName, r.status, r.late === true]));

/** Let `ms` pass in steps of 10 s, the straggler heart-beating each step, scheduled checks running as they come due. */
async function straggle(farm: Farm, worker: Donor, leaseId: string, ms: number) {
  for (let passed = 0; passed < ms; passed += 10 * SECOND) {
    vi.advanceTimersByTime(Math.min(10 * SECOND, ms - passed));
    await farm.t.mutation(api.workers.heartbeat, { apiKey: worker.apiKey, leaseId });
    await farm.t.finishInProgressScheduledFunctions();
    await runDue(farm.t);
  }
}

const complete = (farm: Farm, worker: Donor, leaseId: string, result: unknown) => farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId, result, cpuMs: 10 });

describe("a straggler that keeps heart-beating", () => {
  test("past its deadline a replacement starts beside it; the first quorum agreeing results win and the straggler is canceled at quorum", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, instanceDeadlineMs: 2 * MINUTE }, { leaseMs: 30 * SECOND });
    const [slow, b, c] = [await donor(farm, "slow"), await donor(farm, "b"), await donor(farm, "c")];
    const ls = await instanceLease(farm, slow, jobId);
    await complete(farm, b, await instanceLease(farm, b, jobId), "r");
    await straggle(farm, slow, ls, 2 * MINUTE - 10 * SECOND);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "running" });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: c.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    await straggle(farm, slow, ls, 10 * SECOND);
    expect(await statuses(farm, jobId)).toEqual([["slow", "running", true], ["b", "completed", false]]);
    // c asked before and waits: the dispatcher offers it the replacement
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "offered", workerId: c.workerId });
    await consistent(farm);
    expect(await complete(farm, c, await instanceLease(farm, c, jobId), "r")).toEqual({ status: "succeeded" });
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: slow.apiKey, leaseId: ls })).toMatchObject({ cancel: true });
    expect((await statuses(farm, jobId)).map((s) => s[1])).toEqual(["canceled", "completed", "completed"]);
    await consistent(farm);
  });

  test("the straggler's own result, arriving before the replacement's, still counts", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, instanceDeadlineMs: MINUTE }, { leaseMs: 30 * SECOND });
    const [slow, b, c] = [await donor(farm, "slow"), await donor(farm, "b"), await donor(farm, "c")];
    const ls = await instanceLease(farm, slow, jobId);
    await complete(farm, b, await instanceLease(farm, b, jobId), "r");
    await straggle(farm, slow, ls, MINUTE);
    const lc = await instanceLease(farm, c, jobId);
    expect(await complete(farm, slow, ls, "r")).toEqual({ status: "succeeded" });
    expect((await statuses(farm, jobId)).map((s) => s[1])).toEqual(["completed", "completed", "canceled"]);
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: c.apiKey, leaseId: lc })).toMatchObject({ cancel: true });
    await consistent(farm);
  });

  test("an instance that stops heart-beating before its deadline fails at its lease's end, as before", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, instanceDeadlineMs: 10 * MINUTE }, { leaseMs: 30 * SECOND });
    await instanceLease(farm, await donor(farm, "gone"), jobId);
    vi.advanceTimersByTime(31 * SECOND);
    await farm.t.finishInProgressScheduledFunctions();
    expect((await statuses(farm, jobId)).map((s) => s[1])).toEqual(["failed"]);
    await consistent(farm);
  });
});

describe("the default deadline", () => {
  test("is 3 × the p95 run time of the lane's runs that returned a result, read at the first lease check", async () => {
    const farm = await newFarm();
    const w = await donor(farm, "w");
    // 20 runs of ~12 s (bucket 10–15 s): p95 15 s, deadline 45 s
    for (let i = 0; i < 20; i++) {
      await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
      const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
      vi.advanceTimersByTime(12 * SECOND);
      await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: lease.leaseId, result: i });
    }
    vi.advanceTimersByTime(SECOND);
    await refreshSummaries(farm.t);
    const jobId = await submitReplicated(farm, { quorum: 2 }, { leaseMs: 30 * SECOND });
    const slow = await donor(farm, "slow");
    const ls = await instanceLease(farm, slow, jobId);
    const b = await donor(farm, "b");
    await complete(farm, b, await instanceLease(farm, b, jobId), "r");
    await straggle(farm, slow, ls, 40 * SECOND);
    const row = await farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_lease", (q) => q.eq("leaseId", ls)).unique());
    expect(row).toMatchObject({ deadlineAt: row!.startedAt + 45 * SECOND });
    expect(row!.late).toBeUndefined();
    await straggle(farm, slow, ls, 10 * SECOND);
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", queue: "ready" });
    await consistent(farm);
  });

  test("is 24 h for a lane with too few runs to tell: two hours of heart-beating start no replacement", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 }, { leaseMs: 30 * SECOND });
    const slow = await donor(farm, "slow");
    const ls = await instanceLease(farm, slow, jobId);
    const b = await donor(farm, "b");
    await complete(farm, b, await instanceLease(farm, b, jobId), "r");
    await straggle(farm, slow, ls, 2 * 60 * MINUTE);
    const row = await farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_lease", (q) => q.eq("leaseId", ls)).unique());
    expect(row).toMatchObject({ status: "running", deadlineAt: row!.startedAt + TRUST.maxInstanceDeadlineMs });
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "running" });
    await consistent(farm);
  });

  test("for an app's job is 3 × the app's timeoutMs, set when the instance starts", async () => {
    const farm = await publishingFarm();
    expect((await publish(farm, "render", buildModule({ imports: [FD_WRITE] }), { query: "timeoutMs=20000&quorum=2" })).status).toBe(200);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render" });
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: ["apps", "app.render"], maxConcurrentJobs: 2 });
    const w = await farm.t.mutation(api.workers.enroll, { token, name: "w", machineId: "m-w", capabilities: ["apps", "app.render"], facts: LAPTOP_FACTS });
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["apps", "app.render"] });
    expect(lease.jobId).toBe(jobId);
    const row = await farm.t.run(async (ctx) => await ctx.db.query("jobInstances").withIndex("by_lease", (q) => q.eq("leaseId", lease.leaseId)).unique());
    expect(row!.deadlineAt).toBe(row!.startedAt + 60_000);
  });

  test("never more than 24 h; a submitted instanceDeadlineMs wins", () => {
    const app = { name: "a", version: 1, sha256: "", memoryMB: 64, timeoutMs: 24 * 60 * MINUTE };
    expect(fixedDeadlineMs({ app })).toBe(TRUST.maxInstanceDeadlineMs);
    expect(fixedDeadlineMs({ app: { ...app, timeoutMs: 5 * SECOND } })).toBe(15 * SECOND);
    const validation = { quorum: 2, maxInstances: 4, round: 1, started: 0, workers: [], machines: [], instanceDeadlineMs: 7 * SECOND };
    expect(fixedDeadlineMs({ app, validation })).toBe(7 * SECOND);
    expect(fixedDeadlineMs({})).toBeUndefined();
  });

  test("run times: p95 by bucket, nothing under 20 runs or in the open-ended last bucket; old runs halve away", () => {
    let h: number[] | undefined;
    for (let i = 0; i < MIN_RUNS - 1; i++) h = addRun(h, 12 * SECOND);
    expect(p95RunMs(h)).toBeNull();
    h = addRun(h, 12 * SECOND);
    expect(p95RunMs(h)).toBe(15 * SECOND);
    for (let i = 0; i < 2_000; i++) h = addRun(h, 25 * 3_600_000);
    expect(p95RunMs(h)).toBeNull();
    expect(h.reduce((s, n) => s + n, 0)).toBeLessThanOrEqual(1_000);
  });
});
