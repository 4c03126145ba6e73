import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newBackend, newFarm, snapshot, overviewNow, TEST_TYPES } from "./setup";

test("nothing crosses orgs: jobs, claims, cancels, counts, dead letters", async () => {
  const t = newBackend();
  const a = await newFarm(t, "a");
  const b = await newFarm(t, "b");
  const workerA = await enrollWorker(a, { canManage: true });
  const workerB = await enrollWorker(b, { canManage: true });
  const jobA = await t.mutation(api.jobs.submit, { clientKey: a.clientKey, type: "x", externalId: "same" });
  const jobB = await t.mutation(api.jobs.submit, { clientKey: b.clientKey, type: "x", externalId: "same" });
  expect(jobA).not.toBe(jobB);

  // another org's job id reads as nothing and cannot be canceled
  expect(await t.query(api.jobs.get, { clientKey: b.clientKey, jobId: jobA })).toBeNull();
  expect((await t.query(api.jobs.byExternalId, { clientKey: b.clientKey, externalId: "same" }))!.jobId).toBe(jobB);
  const before = await snapshot(t);
  await expectCode(t.mutation(api.jobs.cancel, { clientKey: b.clientKey, jobId: jobA }), "not_found");
  await expectCode(t.mutation(api.consoleActions.cancelJob, { apiKey: workerB.apiKey, jobId: jobA }), "not_found");
  await expectCode(t.mutation(api.consoleActions.retryJob, { apiKey: workerB.apiKey, jobId: jobA }), "not_found");
  expect(await snapshot(t)).toEqual(before);

  // a worker only ever claims its own org's jobs
  const claimedB = await t.mutation(api.workers.claim, { apiKey: workerB.apiKey, capabilities: TEST_TYPES, max: 10 });
  expect(claimedB.map((c) => c.jobId)).toEqual([jobB]);
  expect(await t.mutation(api.workers.claim, { apiKey: workerB.apiKey, capabilities: TEST_TYPES, max: 10 })).toEqual([]);

  // a worker's lease is no good with another org's worker key
  await expectCode(
    t.mutation(api.workers.complete, { apiKey: workerA.apiKey, leaseId: claimedB[0].leaseId, result: null }),
    "stale_lease",
  );

  // counts are per org
  const overviewA = await overviewNow(t, workerA.apiKey);
  const overviewB = await overviewNow(t, workerB.apiKey);
  expect(overviewA.counts).toMatchObject({ pending: 1, running: 0 });
  expect(overviewB.counts).toMatchObject({ pending: 0, running: 1 });
  expect(overviewA.workers.map((w) => w.workerId)).toEqual([workerA.workerId]);
});

test("malformed job ids are simply not found", async () => {
  const farm = await newFarm();
  expect(await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: "not-an-id" })).toBeNull();
  await expectCode(farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: "not-an-id" }), "not_found");
});
