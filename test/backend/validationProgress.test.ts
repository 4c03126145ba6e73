import { describe, expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { OVERTAKE } from "../../convex/trust/instanceProgress";
import { jobRow } from "./queueState";
import { newFarm, type Farm } from "./setup";
import { consistent, type Donor, donor, instanceLease, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

const beat = (farm: Farm, worker: Donor, leaseId: string, progress?: number, status?: string) =>
  farm.t.mutation(api.workers.heartbeat, { apiKey: worker.apiKey, leaseId, ...(progress !== undefined ? { progress } : {}), ...(status !== undefined ? { status } : {}) });

async function shown(farm: Farm, jobId: Id<"jobs">) {
  const view = (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;
  return { progress: view.progress, statusText: view.statusText, instances: view.validation.instances.map((i) => ("progress" in i ? i.progress : undefined)) };
}

/** Two instances of a quorum-2 job running side by side on a and b. */
async function twoRunning(farm: Farm) {
  const jobId = await submitReplicated(farm, { quorum: 2 });
  const [a, b] = [await donor(farm, "a"), await donor(farm, "b")];
  const [la, lb] = [await instanceLease(farm, a, jobId), await instanceLease(farm, b, jobId)];
  return { jobId, a, b, la, lb };
}

describe("a replicated job shows its leading instance's progress", () => {
  test("the first instance to report leads: the job shows its progress and status text, each instance its own", async () => {
    const farm = await newFarm();
    const { jobId, a, la } = await twoRunning(farm);
    await beat(farm, a, la, 0.3, "step 3 of 10");
    expect(await shown(farm, jobId)).toEqual({ progress: 0.3, statusText: "step 3 of 10", instances: [0.3, undefined] });
    await consistent(farm);
  });

  test("a trailing instance, or one less than OVERTAKE ahead, leaves the job row untouched", async () => {
    const farm = await newFarm();
    const { jobId, a, b, la, lb } = await twoRunning(farm);
    await beat(farm, a, la, 0.3, "a");
    const before = await jobRow(farm.t, jobId);
    await beat(farm, b, lb, 0.1, "b");
    await beat(farm, b, lb, 0.3 + OVERTAKE / 2, "b");
    expect(await jobRow(farm.t, jobId)).toEqual(before);
    expect((await shown(farm, jobId)).instances).toEqual([0.3, 0.3 + OVERTAKE / 2]);
    await consistent(farm);
  });

  test("the leader's heartbeats move the job's progress and text; a heartbeat with nothing to say writes no job row", async () => {
    const farm = await newFarm();
    const { jobId, a, la } = await twoRunning(farm);
    await beat(farm, a, la, 0.3, "a");
    await beat(farm, a, la, 0.5);
    expect(await shown(farm, jobId)).toMatchObject({ progress: 0.5, statusText: "a" });
    const before = await jobRow(farm.t, jobId);
    await beat(farm, a, la);
    expect(await jobRow(farm.t, jobId)).toEqual(before);
    await consistent(farm);
  });

  test("an instance OVERTAKE ahead takes the lead with its own status text", async () => {
    const farm = await newFarm();
    const { jobId, a, b, la, lb } = await twoRunning(farm);
    await beat(farm, a, la, 0.3, "a is at 3");
    await beat(farm, b, lb, 0.3 + OVERTAKE, "b is at 3.5");
    expect(await shown(farm, jobId)).toMatchObject({ progress: 0.3 + OVERTAKE, statusText: "b is at 3.5" });
    // a is now the trailing one
    await beat(farm, a, la, 0.33, "a moved");
    expect(await shown(farm, jobId)).toMatchObject({ progress: 0.3 + OVERTAKE, statusText: "b is at 3.5" });
    await consistent(farm);
  });

  test("the leader returning its result: the next instance to report leads at once, even behind", async () => {
    const farm = await newFarm();
    const { jobId, a, b, la, lb } = await twoRunning(farm);
    await beat(farm, a, la, 0.9, "a");
    await beat(farm, b, lb, 0.2, "b");
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 });
    expect((await jobRow(farm.t, jobId)).progressInstance).toBeUndefined();
    await consistent(farm);
    await beat(farm, b, lb, 0.25, "b");
    expect(await shown(farm, jobId)).toMatchObject({ progress: 0.25, statusText: "b" });
    await consistent(farm);
  });

  test("quorum reached: the job shows 1", async () => {
    const farm = await newFarm();
    const { jobId, a, b, la, lb } = await twoRunning(farm);
    await beat(farm, b, lb, 0.4);
    await farm.t.mutation(api.workers.complete, { apiKey: a.apiKey, leaseId: la, result: 1 });
    await farm.t.mutation(api.workers.complete, { apiKey: b.apiKey, leaseId: lb, result: 1 });
    expect((await jobRow(farm.t, jobId))).toMatchObject({ status: "succeeded", progress: 1 });
    expect((await jobRow(farm.t, jobId)).progressInstance).toBeUndefined();
    await consistent(farm);
  });
});
