import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MachineFacts } from "../../convex/lib/facts";
import { LAPTOP_FACTS, type Farm, TEST_TYPES } from "./setup";

/** A donor of the replicated-job tests (validation.test.ts, validationConsole.test.ts). */
export type Donor = { apiKey: string; workerId: Id<"workers">; name: string };

/** A worker of its own machine (`machineId`; by default one per name). */
export async function donor(farm: Farm, name: string, machineId = `machine-${name}`, facts: MachineFacts = LAPTOP_FACTS): Promise<Donor> {
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4 });
  const enrolled = await farm.t.mutation(api.workers.enroll, { token, name, machineId, capabilities: TEST_TYPES, facts });
  return { ...enrolled, name };
}

/** A job of type "x" with these validation rules. */
export const submitReplicated = (farm: Farm, validation: { quorum: number; maxInstances?: number }) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: { n: 7 }, validation });

/** The donor claims and must get an instance of this job; its lease id. */
export async function instanceLease(farm: Farm, worker: Donor, jobId: Id<"jobs">): Promise<string> {
  const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  if (lease?.jobId !== jobId) throw new Error(`${worker.name} should get an instance of ${jobId}, got ${lease?.jobId}`);
  return lease.leaseId;
}
