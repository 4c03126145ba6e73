import { afterEach, beforeEach, expect, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { MachineFacts } from "../../convex/lanes/facts";
import type { ValidationSpec } from "../../convex/trust/validation";
import { jobRow, runDue } from "./queueState";
import { LAPTOP_FACTS, type Farm, TEST_TYPES } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/** A donor of the replicated-job tests (test/backend/validation*.test.ts). */
export type Donor = { apiKey: string; workerId: Id<"workers">; name: string };

/** A worker of its own machine (`machineId`; by default one per name). */
export async function donor(farm: Farm, name: string, machineId = `machine-${name}`, facts: MachineFacts = LAPTOP_FACTS): Promise<Donor> {
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4 });
  const enrolled = await farm.t.mutation(api.workers.enroll, { token, name, machineId, capabilities: TEST_TYPES, facts });
  return { ...enrolled, name };
}

/** A job of type "x" with these validation rules. */
export const submitReplicated = (farm: Farm, validation: ValidationSpec, extra: { maxAttempts?: number; leaseMs?: number } = {}) =>
  farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: { n: 7 }, validation, ...extra });

/** The donor claims and must get an instance of this job; its lease id. */
export async function instanceLease(farm: Farm, worker: Donor, jobId: Id<"jobs">): Promise<string> {
  const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  if (lease?.jobId !== jobId) throw new Error(`${worker.name} should get an instance of ${jobId}, got ${lease?.jobId}`);
  return lease.leaseId;
}

/** The replicated-job tests' clock: fake timers from one fixed noon, restored after each test. */
export function useReplicationClock(): void {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2026, 10, 18, 12));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });
}

/** Scheduled work done, the tables agree with each other. */
export async function consistent(farm: Farm): Promise<void> {
  await runDue(farm.t);
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/**
 * A quorum-2 job with one spare instance (`spare: 1`): three instances start side by side, each on its own
 * machine; the one still running when two agree is canceled at quorum.
 */
export async function quorumTwoWithSpare(farm: Farm) {
  const jobId = await submitReplicated(farm, { quorum: 2, spare: 1 });
  const [a, b, c] = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
  const [la, lb, lc] = [await instanceLease(farm, a, jobId), await instanceLease(farm, b, jobId), await instanceLease(farm, c, jobId)];
  return { jobId, a, b, c, la, lb, lc };
}

/** Let fake time reach the job's availableAt (a failed instance's backoff) and the promotion run. */
export async function pastBackoff(farm: Farm, jobId: Id<"jobs">): Promise<void> {
  vi.advanceTimersByTime(Math.max(0, (await jobRow(farm.t, jobId)).availableAt - Date.now()));
  await farm.t.finishInProgressScheduledFunctions();
  await runDue(farm.t);
}
