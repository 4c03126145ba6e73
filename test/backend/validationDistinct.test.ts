import { describe, expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { ValidationSpec } from "../../convex/trust/validation";
import { jobRow, runDue } from "./queueState";
import { enrollWorker, expectCode, LAPTOP_FACTS, newFarm, type Farm, TEST_TYPES } from "./setup";
import { consistent, type Donor, instanceLease, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

/** A worker enrolled with a token carrying this donor label (none: unlabeled), on a machine of its own. */
async function ownedBy(farm: Farm, name: string, donor?: string): Promise<Donor> {
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, {
    orgId: farm.orgId,
    capabilities: TEST_TYPES,
    maxConcurrentJobs: 4,
    ...(donor !== undefined ? { donor } : {}),
  });
  const enrolled = await farm.t.mutation(api.workers.enroll, { token, name, machineId: `machine-${name}`, capabilities: TEST_TYPES, facts: LAPTOP_FACTS });
  return { ...enrolled, name };
}

const claim = (farm: Farm, worker: Donor) => farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
const complete = (farm: Farm, worker: Donor, leaseId: string, result: unknown) => farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId, result });
const resultOf = async (farm: Farm, jobId: Id<"jobs">) => (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;

/**
 * Two colluding workers of one donor (each on a machine of its own) return the same wrong value; two honest ones
 * the right one. The colluders claim first, whenever they can.
 */
async function collusion(validation: ValidationSpec) {
  const farm = await newFarm();
  const [m1, m2] = [await ownedBy(farm, "m1", "mallory"), await ownedBy(farm, "m2", "mallory")];
  const [a, b] = [await ownedBy(farm, "a", "alice"), await ownedBy(farm, "b")];
  const jobId = await submitReplicated(farm, validation);
  const order = [m1, m2, a, b];
  const held = new Map<string, string>();
  for (let turn = 0; turn < 12 && (await jobRow(farm.t, jobId)).status !== "succeeded"; turn++) {
    for (const w of order) {
      if (held.has(w.name)) continue;
      const [lease] = await claim(farm, w);
      if (lease) held.set(w.name, lease.leaseId);
    }
    // the colluders answer first
    for (const w of order) {
      const leaseId = held.get(w.name);
      if (!leaseId || leaseId === "done" || (await jobRow(farm.t, jobId)).status === "succeeded") continue;
      await complete(farm, w, leaseId, w.name.startsWith("m") ? "wrong" : "right");
      held.set(w.name, "done");
    }
    await consistent(farm);
  }
  const instances = (await resultOf(farm, jobId)).validation.instances.map((i) => i.workerName);
  return { farm, jobId, instances, result: (await resultOf(farm, jobId)).result };
}

describe("distinct donors", () => {
  test('distinct "donor": two colluding workers of one donor are never both instances, and the honest result wins', async () => {
    const { instances, result } = await collusion({ quorum: 2, distinct: "donor" });
    expect(instances.filter((n) => n.startsWith("m"))).toHaveLength(1);
    expect(result).toBe("right");
  });

  test('distinct "machine" (the default): the same two colluders, each on a machine of its own, get their lie accepted', async () => {
    const { instances, result } = await collusion({ quorum: 2 });
    expect(instances).toEqual(["m1", "m2"]);
    expect(result).toBe("wrong");
  });

  test("workers without a donor label count as their own donor", async () => {
    const farm = await newFarm();
    const jobId = await submitReplicated(farm, { quorum: 2, distinct: "donor" });
    const [a, b] = [await ownedBy(farm, "a"), await ownedBy(farm, "b")];
    await complete(farm, a, await instanceLease(farm, a, jobId), 1);
    expect(await complete(farm, b, await instanceLease(farm, b, jobId), 1)).toEqual({ status: "succeeded" });
    await consistent(farm);
  });

  test("the dispatcher offers the next instance to a waiting worker of another donor only; a donor that gave its instance back may run it again", async () => {
    const farm = await newFarm();
    const [m1, m2, a] = [await ownedBy(farm, "m1", "mallory"), await ownedBy(farm, "m2", "mallory"), await ownedBy(farm, "a", "alice")];
    const jobId = await submitReplicated(farm, { quorum: 3, distinct: "donor" });
    const held = await instanceLease(farm, m1, jobId);
    await farm.t.mutation(api.workers.ready, { apiKey: m2.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await farm.t.mutation(api.workers.ready, { apiKey: a.apiKey, capabilities: TEST_TYPES, slots: 4 });
    await runDue(farm.t);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: a.apiKey })).offers.map((o) => o.jobId)).toEqual([jobId]);
    expect((await farm.t.query(api.workers.doorbell, { apiKey: m2.apiKey })).offers).toEqual([]);
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ donors: ["donor:mallory"] });
    await consistent(farm);
    await farm.t.mutation(api.workers.release, { apiKey: m1.apiKey, leaseId: held });
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ donors: [] });
    await consistent(farm);
  });
});

describe("the enrollment's donor label and maxCores", () => {
  test("reach the worker it enrolls; the console lists them; admin:createEnrollment takes them too", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    const { token } = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: ["cpu"], donor: "  alice ", maxCores: 16 });
    const enrolled = await farm.t.mutation(api.workers.enroll, { token, name: "w", machineId: "m-w", capabilities: ["cpu"] });
    const blank = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: [], donor: "   " });
    const fromAdmin = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], donor: "bob", maxCores: 2 });
    const other = await farm.t.mutation(api.workers.enroll, { token: fromAdmin.token, name: "o", machineId: "m-o", capabilities: [] });
    const rows = await farm.t.run(async (ctx) => [await ctx.db.get(enrolled.workerId), await ctx.db.get(other.workerId)]);
    expect(rows.map((w) => [w?.donor, w?.maxCores])).toEqual([["alice", 16], ["bob", 2]]);
    const listed = (await farm.t.query(api.consoleAccess.list, { apiKey: op.apiKey })).enrollments;
    expect(listed.find((e) => e.workerId === enrolled.workerId)).toMatchObject({ donor: "alice", maxCores: 16 });
    expect(listed.find((e) => e.enrollmentId === blank.enrollmentId)).toMatchObject({ donor: null, maxCores: 256 });
  });

  test("a donor label over 128 characters or maxCores outside 1–4,096 is refused", async () => {
    const farm = await newFarm();
    const op = await enrollWorker(farm, { canManage: true, name: "op" });
    await expectCode(farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: [], donor: "d".repeat(129) }), "too_large");
    for (const maxCores of [0, 4_097, 1.5]) {
      await expectCode(farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], maxCores }), "invalid_argument");
    }
  });
});
