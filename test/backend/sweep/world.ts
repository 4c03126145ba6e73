import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { sha256Hex } from "../../../convex/access/keys";
import { enrollWorker, newFarm, type Backend, type Enrolled, type Farm } from "../setup";

/** One org with an object in every state a sweep should poke at. */
export type OrgWorld = {
  farm: Farm;
  revokedClientKey: string;
  worker: Enrolled;
  manager: Enrolled;
  /** An operator key of the org (only an operator key makes operator keys). */
  operatorKey: string;
  revokedWorker: Enrolled;
  freshToken: string;
  usedToken: string;
  expiredToken: string;
  jobs: {
    pending: Id<"jobs">;
    delayed: Id<"jobs">;
    running: Id<"jobs">;
    managerRunning: Id<"jobs">;
    succeeded: Id<"jobs">;
    canceled: Id<"jobs">;
    dead: Id<"jobs">;
  };
  liveLease: string;
  managerLease: string;
  staleLeases: { released: string; finished: string; failed: string };
  externalId: string;
  batchId: string;
  otherIds: {
    workerId: string;
    laneId: string;
    orgId: string;
    eventId: string;
    clientKeyId: string;
    outputId: string;
    expiredEnrollmentId: string;
    operatorKeyId: string;
  };
};

async function token(farm: Farm, ttlMs?: number): Promise<string> {
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, {
    orgId: farm.orgId,
    capabilities: ["cpu", "gpu", "ollama:*"],
    maxConcurrentJobs: 4,
    ttlMs,
  });
  return token;
}

async function claimOne(farm: Farm, worker: Enrolled) {
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
  if (!claim) throw new Error("world: nothing to claim");
  return claim;
}

/** Build an org's world. Needs fake timers (the expired token and the delayed job use Date.now()). */
export async function buildOrgWorld(t: Backend, name: string): Promise<OrgWorld> {
  const farm = await newFarm(t, name);
  const submit = (spec: Record<string, unknown> = {}) =>
    t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `${name}.job`, payload: { n: 1 }, ...spec });
  const { key: revokedClientKey, clientKeyId } = await t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "old" });
  await t.mutation(internal.admin.revokeClientKey, { clientKeyId });
  const worker = await enrollWorker(farm, { capabilities: ["cpu", "gpu"], maxConcurrentJobs: 8 });
  const manager = await enrollWorker(farm, { capabilities: ["cpu"], maxConcurrentJobs: 8, canManage: true, name: "manager" });
  const revokedWorker = await enrollWorker(farm, { capabilities: ["cpu"], name: "gone" });
  await t.mutation(internal.admin.revokeWorker, { workerId: revokedWorker.workerId });

  const usedToken = await token(farm);
  await t.mutation(api.workers.enroll, { token: usedToken, name: "used", machineId: "m-used", capabilities: [] });
  const expiredToken = await token(farm, 1);
  const freshToken = await token(farm);

  // jobs claimed in order: the worker takes each one right after it is submitted
  const released = await submit();
  const releasedLease = (await claimOne(farm, worker)).leaseId;
  await t.mutation(api.workers.release, { apiKey: worker.apiKey, leaseId: releasedLease });
  const releasedAgain = await claimOne(farm, worker); // the released job, running again under a new lease
  await t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: releasedAgain.leaseId, result: "ok" });
  const succeeded = released;
  const finishedLease = releasedAgain.leaseId;

  const dead = await submit({ maxAttempts: 1, requiredCapabilities: ["gpu"] });
  const deadLease = (await claimOne(farm, worker)).leaseId;
  await t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: deadLease, error: "boom", retryable: false });

  const running = await submit({ requiredCapabilities: ["cpu"], batchId: `${name}-batch` });
  const live = await claimOne(farm, worker);
  await t.mutation(api.workers.output, { apiKey: worker.apiKey, leaseId: live.leaseId, chunk: "hello " });
  await t.mutation(api.workers.heartbeat, { apiKey: worker.apiKey, leaseId: live.leaseId, progress: 0.5, status: "half" });
  const managerRunning = await submit({ requiredCapabilities: ["cpu"] });
  const managerLease = (await claimOne(farm, manager)).leaseId;

  const canceled = await submit();
  await t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: canceled });
  const externalId = `${name}-ext-1`;
  const batchId = `${name}-batch`;
  const pending = await submit({ externalId, batchId, priority: 5, requiredCapabilities: ["gpu"] });
  const delayed = await submit({ delayMs: 3_600_000, batchId });

  const { operatorKeyId, key: operatorKey } = await t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
  const expiredTokenHash = await sha256Hex(expiredToken);
  const otherIds = await t.run(async (ctx) => ({
    workerId: worker.workerId,
    laneId: (await ctx.db.get(pending))!.laneId,
    orgId: farm.orgId,
    eventId: (await ctx.db.query("jobEvents").first())!._id,
    clientKeyId,
    operatorKeyId,
    outputId: (await ctx.db.query("jobOutput").first())!._id,
    expiredEnrollmentId: (await ctx.db
      .query("enrollments")
      .withIndex("by_hash", (q) => q.eq("tokenHash", expiredTokenHash))
      .unique())!._id,
  }));
  return {
    farm,
    revokedClientKey,
    worker,
    manager,
    operatorKey,
    revokedWorker,
    freshToken,
    usedToken,
    expiredToken,
    jobs: { pending, delayed, running, managerRunning, succeeded, canceled, dead },
    liveLease: live.leaseId,
    managerLease,
    staleLeases: { released: releasedLease, finished: finishedLease, failed: deadLease },
    externalId,
    batchId,
    otherIds,
  };
}
