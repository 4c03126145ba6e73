import { describe, expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { ROUND_ROWS } from "../../convex/trust/validation";
import { jobRow, runDue } from "./queueState";
import { newFarm, type Farm, TEST_TYPES } from "./setup";
import { consistent, donor, type Donor, instanceLease, pastBackoff, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

// A failed instance is one error result of its round (BOINC's error result), never the job's verdict.

const claim = (farm: Farm, worker: Donor) => farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
const fail = (farm: Farm, worker: Donor, leaseId: string, retryable?: boolean) =>
  farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId, error: `${worker.name} failed`, ...(retryable === undefined ? {} : { retryable }) });
const complete = (farm: Farm, worker: Donor, leaseId: string, result: unknown) => farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId, result });
const get = (farm: Farm, jobId: Id<"jobs">) => farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
const statuses = (farm: Farm, jobId: Id<"jobs">) =>
  farm.t.run(async (ctx) => (await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", jobId)).collect()).map((r) => r.status));

/** The worker takes an instance of the job and fails it; then the backoff passes. */
async function failsOne(farm: Farm, worker: Donor, jobId: Id<"jobs">, retryable?: boolean) {
  const out = await fail(farm, worker, await instanceLease(farm, worker, jobId), retryable);
  await consistent(farm);
  if (out.status === "pending") await pastBackoff(farm, jobId);
  return out;
}

describe("a failed instance is one vote", () => {
  test("a saboteur that takes the first instance and fails it for good cannot end the job: two honest workers finish it", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const [saboteur, a, b] = [await donor(farm, "saboteur"), await donor(farm, "a"), await donor(farm, "b")];
    expect(await failsOne(farm, saboteur, jobId, false)).toMatchObject({ status: "pending" });
    const la = await instanceLease(farm, a, jobId);
    const lb = await instanceLease(farm, b, jobId);
    await complete(farm, a, la, { answer: 49 });
    expect(await complete(farm, b, lb, { answer: 49 })).toEqual({ status: "succeeded" });
    const view = (await get(farm, jobId))!;
    expect(view).toMatchObject({ status: "succeeded", result: { answer: 49 }, validation: { state: "valid" } });
    expect(view.validation.instances.map((i) => [i.workerName, i.status])).toEqual([["saboteur", "failed"], ["a", "completed"], ["b", "completed"]]);
    await consistent(farm);
  });

  test("the worker that failed an instance, and its machine, are never offered the job again in this round", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const saboteur = await donor(farm, "saboteur");
    const twin = await donor(farm, "twin", "machine-saboteur");
    await failsOne(farm, saboteur, jobId);
    expect(await claim(farm, saboteur)).toEqual([]);
    expect(await claim(farm, twin)).toEqual([]);
    // waiting, it is passed over by the dispatcher too: the job goes to the other waiter
    const other = await donor(farm, "other");
    await farm.t.mutation(api.workers.ready, { apiKey: saboteur.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await farm.t.mutation(api.workers.ready, { apiKey: other.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await runDue(farm.t);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: other.apiKey })).offers.map((o) => o.jobId)).toEqual([jobId]);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: saboteur.apiKey })).offers).toEqual([]);
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ workers: [saboteur.workerId], machines: ["machine-saboteur"] });
    await consistent(farm);
  });

  test("instance failures never use the job's attempts: three failures of a job with maxAttempts 1 leave it waiting for honest results", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 }, { maxAttempts: 1 });
    for (const name of ["s1", "s2", "s3"]) expect(await failsOne(farm, await donor(farm, name), jobId, false)).toMatchObject({ status: "pending" });
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", attempt: 0 });
    await consistent(farm);
  });

  test("maxErrorInstances failures, each on another worker, end the job dead with too_many_errors; a running instance is canceled", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, maxErrorInstances: 2 });
    const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    await failsOne(farm, a, jobId);
    const lc = await instanceLease(farm, c, jobId);
    expect(await failsOne(farm, b, jobId)).toMatchObject({ status: "dead" });
    const view = (await get(farm, jobId))!;
    expect(view.error).toMatch(/^too_many_errors: 2 instances failed, each on another worker; the last: b failed/);
    expect(view.validation).toMatchObject({ state: "too_many_errors", maxErrorInstances: 2 });
    expect(await statuses(farm, jobId)).toEqual(["failed", "canceled", "failed"]);
    expect(await farm.t.mutation(api.workers.heartbeat, { apiKey: c.apiKey, leaseId: lc })).toMatchObject({ cancel: true });
    await consistent(farm);
  });

  test("maxErrorInstances defaults to maxInstances (quorum 2: 4)", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    for (const name of ["a", "b", "c"]) expect(await failsOne(farm, await donor(farm, name), jobId)).toMatchObject({ status: "pending" });
    expect(await failsOne(farm, await donor(farm, "d"), jobId)).toMatchObject({ status: "dead" });
    expect((await get(farm, jobId))!.validation).toMatchObject({ state: "too_many_errors", maxErrorInstances: 4 });
    await consistent(farm);
  });

  test("a retried dead letter starts a round with no errors and nobody excluded", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, maxErrorInstances: 1 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    expect(await failsOne(farm, a, jobId)).toMatchObject({ status: "dead" });
    await farm.t.mutation(internal.admin.retryDead, { jobId });
    await complete(farm, a, await instanceLease(farm, a, jobId), 1);
    expect(await complete(farm, b, await instanceLease(farm, b, jobId), 1)).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("the failure of a worker revoked since no longer counts", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, maxErrorInstances: 2 });
    const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
    await failsOne(farm, a, jobId);
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: a.workerId });
    expect(await failsOne(farm, b, jobId)).toMatchObject({ status: "pending" });
    await consistent(farm);
  });
});

describe("an instance given back casts no vote", () => {
  test("released: the same worker may start it again, on the same instance row", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const a = await donor(farm, "a");
    await farm.t.mutation(api.workers.release, { apiKey: a.apiKey, leaseId: await instanceLease(farm, a, jobId) });
    expect(await statuses(farm, jobId)).toEqual(["released"]);
    await consistent(farm);
    const again = await instanceLease(farm, a, jobId);
    expect(await statuses(farm, jobId)).toEqual(["running"]);
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ started: 1, workers: [a.workerId] });
    await farm.t.mutation(api.workers.heartbeat, { apiKey: a.apiKey, leaseId: again });
    await consistent(farm);
  });

  test(`a round holds at most ${ROUND_ROWS} instances: no worker starts another; once none runs without a verdict, it ends dead with no_quorum`, async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const first = await donor(farm, "first");
    const held = await instanceLease(farm, first, jobId);
    for (let i = 1; i < ROUND_ROWS; i++) {
      const w = await donor(farm, `w${i}`);
      await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: await instanceLease(farm, w, jobId) });
    }
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "pending", validation: { started: ROUND_ROWS } });
    expect(await claim(farm, await donor(farm, "one-too-many"))).toEqual([]);
    await consistent(farm);
    await farm.t.mutation(api.workers.release, { apiKey: first.apiKey, leaseId: held });
    expect(await jobRow(farm.t, jobId)).toMatchObject({ status: "dead", validation: { started: ROUND_ROWS, outcome: "no_quorum" } });
    expect((await get(farm, jobId))!.error).toMatch(/^no_quorum: 40 instances started/);
    await consistent(farm);
  });
});
