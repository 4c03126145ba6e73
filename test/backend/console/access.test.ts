import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, TEST_TYPES } from "../setup";

afterEach(() => vi.useRealTimers());

test("a worker without canManage is refused by every console function", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const apiKey = worker.apiKey;
  const calls: Array<() => Promise<unknown>> = [
    () => farm.t.query(api.console.overview, { apiKey }),
    () => farm.t.query(api.console.jobs, { apiKey, filter: {}, paginationOpts: { numItems: 10, cursor: null } }),
    () => farm.t.query(api.console.job, { apiKey, jobId }),
    () => farm.t.query(api.console.jobOutput, { apiKey, jobId }),
    () => farm.t.query(api.console.workers, { apiKey }),
    () => farm.t.query(api.console.leaderboard, { apiKey, weekOf: Date.now() }),
    () => farm.t.query(api.console.bulkStatus, { apiKey, bulkId: jobId }),
    () => farm.t.mutation(api.consoleActions.retryJob, { apiKey, jobId }),
    () => farm.t.mutation(api.consoleActions.cancelJob, { apiKey, jobId }),
    () => farm.t.mutation(api.consoleActions.purgeJob, { apiKey, jobId }),
    () => farm.t.mutation(api.consoleActions.bulk, { apiKey, action: "cancel", filter: {} }),
    () => farm.t.mutation(api.consoleActions.purgeDead, { apiKey }),
    () => farm.t.query(api.consoleAccess.list, { apiKey }),
    () => farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey, capabilities: [] }),
    () => farm.t.mutation(api.consoleAccess.revokeEnrollment, { apiKey, enrollmentId: jobId }),
    () => farm.t.mutation(api.consoleAccess.createClientKey, { apiKey, name: "k" }),
    () => farm.t.mutation(api.consoleAccess.revokeClientKey, { apiKey, clientKeyId: jobId }),
    () => farm.t.mutation(api.consoleAccess.revokeWorker, { apiKey, workerId: worker.workerId }),
  ];
  for (const call of calls) await expectCode(call(), "forbidden");
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ status: "pending" });
});

test("tokens made in the console enroll once; a revoked one never; lists show prefixes and state only", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, name: "op" });
  const { token } = await farm.t.mutation(api.consoleAccess.createEnrollment, {
    apiKey: op.apiKey,
    capabilities: ["cpu", "ollama:*"],
    maxConcurrentJobs: 3,
    ttlMs: 60_000,
    canManage: true,
  });
  const enrolled = await farm.t.mutation(api.workers.enroll, { token, name: "new", machineId: "m2", capabilities: ["cpu"] });
  const revokedToken = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: [] });
  await farm.t.mutation(api.consoleAccess.revokeEnrollment, { apiKey: op.apiKey, enrollmentId: revokedToken.enrollmentId });
  await expectCode(farm.t.mutation(api.workers.enroll, { token: revokedToken.token, name: "x", machineId: "m3", capabilities: [] }), "token_expired");

  const access = await farm.t.query(api.consoleAccess.list, { apiKey: op.apiKey });
  const states = access.enrollments.map((e) => e.state).sort();
  expect(states).toEqual(["revoked", "used", "used"]); // the operator's own, the new worker's, the revoked one
  const made = access.enrollments.find((e) => e.workerId === enrolled.workerId)!;
  expect(made).toMatchObject({ capabilities: ["cpu", "ollama:*"], maxConcurrentJobs: 3, canManage: true });
  expect(JSON.stringify(access)).not.toContain(token);
  await expectCode(farm.t.mutation(api.consoleAccess.revokeEnrollment, { apiKey: op.apiKey, enrollmentId: made.enrollmentId }), "invalid_argument");
  await expectCode(farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: ["BAD CAP"] }), "invalid_argument");
});

test("client keys made in the console submit; revoked ones stop", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const { key, clientKeyId } = await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: op.apiKey, name: "app" });
  await farm.t.mutation(api.jobs.submit, { clientKey: key, type: "x" });
  const listed = await farm.t.query(api.consoleAccess.list, { apiKey: op.apiKey });
  expect(listed.clientKeys.map((k) => k.name).sort()).toEqual(["app", "ci"]);
  await farm.t.mutation(api.consoleAccess.revokeClientKey, { apiKey: op.apiKey, clientKeyId });
  await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: key, type: "x" }), "revoked");
  await expectCode(farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: op.apiKey, name: "  " }), "invalid_argument");
});

test("revoking a worker from the console hands its running job back; its own key it cannot revoke", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const worker = await enrollWorker(farm, { name: "donor" });
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  expect(await farm.t.mutation(api.consoleAccess.revokeWorker, { apiKey: op.apiKey, workerId: worker.workerId })).toEqual({ handedBack: 1, alsoRevoked: 0 });
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId })).toMatchObject({ status: "pending" });
  await expectCode(farm.t.query(api.workers.checkKey, { apiKey: worker.apiKey }), "revoked");
  await expectCode(farm.t.mutation(api.consoleAccess.revokeWorker, { apiKey: op.apiKey, workerId: op.workerId }), "invalid_argument");
  // a revoked worker leaves the workers list at once
  const { page } = await farm.t.query(api.console.workers, { apiKey: op.apiKey });
  expect(page.map((w) => w.workerId)).toEqual([op.workerId]);
});
