import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * Keys that made keys (access/keyCreators.ts): every key records its maker; revoking a key revokes what it made, and what
 * those made (in scheduled pages); a managing worker's key makes no operator key and no key that publishes apps.
 */

afterEach(() => vi.useRealTimers());

async function operatorKey(farm: Farm, name: string) {
  return await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name });
}

const rows = (farm: Farm) =>
  farm.t.run(async (ctx) => ({
    clientKeys: await ctx.db.query("clientKeys").collect(),
    operatorKeys: await ctx.db.query("operatorKeys").collect(),
    enrollments: await ctx.db.query("enrollments").collect(),
    workers: await ctx.db.query("workers").collect(),
  }));

test("every key made in the console records its maker; revoking an operator key revokes what it made, and what those made", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const root = await operatorKey(farm, "root");
  const alice = await operatorKey(farm, "alice");
  // alice makes a client key (with a schedule), a second operator key, a token used by a worker, and a token left unused
  const aliceClient = await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: alice.key, name: "alice-ci", canPublish: true });
  await farm.t.mutation(api.schedules.create, { clientKey: aliceClient.key, name: "nightly", cron: "0 2 * * *", job: { type: "j1" } });
  const bob = await farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: alice.key, name: "bob" });
  const { token } = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: alice.key, capabilities: ["j1"], canManage: true });
  const worker = await farm.t.mutation(api.workers.enroll, { token, name: "alice-box", machineId: "m-alice", capabilities: ["j1"] });
  const unused = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: alice.key, capabilities: ["j1"] });
  // bob and the managing worker make keys of their own
  const bobClient = await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: bob.key, name: "bob-ci" });
  const workerClient = await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: worker.apiKey, name: "worker-ci" });
  const before = await rows(farm);
  expect(before.clientKeys.find((k) => k._id === aliceClient.clientKeyId)!.createdBy).toBe(alice.operatorKeyId);
  expect(before.operatorKeys.find((k) => k._id === bob.operatorKeyId)!.createdBy).toBe(alice.operatorKeyId);
  expect(before.workers.find((w) => w._id === worker.workerId)!.createdBy).toBe(alice.operatorKeyId);
  expect(before.clientKeys.find((k) => k._id === workerClient.clientKeyId)!.createdBy).toBe(worker.workerId);
  expect(before.operatorKeys.find((k) => k._id === alice.operatorKeyId)!.createdBy).toBeUndefined(); // made by admin:*
  const listed = await farm.t.query(api.consoleAccess.list, { apiKey: root.key });
  expect(listed.operatorKeys.find((k) => k.name === "bob")!.createdBy).toBe(alice.operatorKeyId);
  expect(listed.asOperator).toBe(true);
  // the console asks first: what revoking alice also revokes
  expect(await farm.t.query(api.consoleAccess.minted, { apiKey: root.key, keyId: alice.operatorKeyId })).toEqual({ clientKeys: 1, operatorKeys: 1, enrollments: 1, workers: 1, more: false });

  expect(await farm.t.mutation(api.consoleAccess.revokeOperatorKey, { apiKey: root.key, operatorKeyId: alice.operatorKeyId })).toEqual({ alsoRevoked: 4 });
  await expectCode(farm.t.query(api.jobs.list, { clientKey: aliceClient.key }), "revoked");
  await expectCode(farm.t.query(api.consoleAccess.list, { apiKey: bob.key }), "revoked");
  await expectCode(farm.t.query(api.workers.checkKey, { apiKey: worker.apiKey }), "revoked");
  await expectCode(farm.t.mutation(api.workers.enroll, { token: unused.token, name: "late", machineId: "m-late", capabilities: [] }), "token_expired");
  expect((await farm.t.query(api.schedules.list, { clientKey: farm.clientKey }))[0]).toMatchObject({ name: "nightly", paused: true });
  // what bob and the worker made goes in their own scheduled pages
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  await expectCode(farm.t.query(api.jobs.list, { clientKey: bobClient.key }), "revoked");
  await expectCode(farm.t.query(api.jobs.list, { clientKey: workerClient.key }), "revoked");
  // keys nobody revoked keep working
  expect(await farm.t.query(api.jobs.list, { clientKey: farm.clientKey })).toBeTruthy();
  expect(await farm.t.query(api.consoleAccess.list, { apiKey: root.key })).toBeTruthy();
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a key that made more than a page of keys: the first page goes at once, the rest in scheduled pages", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const root = await operatorKey(farm, "root");
  const maker = await operatorKey(farm, "maker");
  for (let i = 0; i < 120; i++) await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: maker.key, name: `k${i}` });
  expect(await farm.t.query(api.consoleAccess.minted, { apiKey: root.key, keyId: maker.operatorKeyId })).toEqual({ clientKeys: 100, operatorKeys: 0, enrollments: 0, workers: 0, more: true });
  expect(await farm.t.mutation(internal.admin.revokeOperatorKey, { operatorKeyId: maker.operatorKeyId })).toEqual({ alsoRevoked: 50 });
  const made = (await rows(farm)).clientKeys.filter((k) => k.createdBy === maker.operatorKeyId);
  expect(made.filter((k) => k.revoked)).toHaveLength(50);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers);
  expect((await rows(farm)).clientKeys.filter((k) => k.createdBy === maker.operatorKeyId).every((k) => k.revoked)).toBe(true);
});

test("a managing worker's key makes no operator key and no publishing key, and sets no key's share; revoking the worker revokes what it made", async () => {
  const farm = await newFarm();
  const manager = await enrollWorker(farm, { canManage: true, name: "manager" });
  await expectCode(farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: manager.apiKey, name: "escalate" }), "forbidden");
  await expectCode(farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: manager.apiKey, name: "publisher", canPublish: true }), "forbidden");
  expect((await farm.t.query(api.consoleAccess.list, { apiKey: manager.apiKey })).asOperator).toBe(false);
  const plain = await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: manager.apiKey, name: "ci" });
  // a donor's machine does not move tenants' shares: not of the farm's key, not of the key it made itself
  const limits = { weight: 1000, maxRunning: null, fairnessWeights: [{ fairnessKey: "mine", weight: 1000 }] };
  const farmKeyId = (await rows(farm)).clientKeys.find((k) => k.createdBy === undefined)!._id;
  await expectCode(farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey: manager.apiKey, clientKeyId: farmKeyId, ...limits }), "forbidden");
  await expectCode(farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey: manager.apiKey, clientKeyId: plain.clientKeyId, weight: 2 }), "forbidden");
  const keys = (await rows(farm)).clientKeys;
  expect(keys.every((k) => k.weight === undefined && k.maxRunning === undefined)).toBe(true);
  expect(await farm.t.run(async (ctx) => (await ctx.db.query("fairnessWeights").take(1)).length)).toBe(0);
  const { token } = await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: manager.apiKey, capabilities: [] });
  expect(await farm.t.mutation(internal.admin.revokeWorker, { workerId: manager.workerId })).toEqual({ handedBack: 0, alsoRevoked: 2 });
  await expectCode(farm.t.query(api.jobs.list, { clientKey: plain.key }), "revoked");
  await expectCode(farm.t.mutation(api.workers.enroll, { token, name: "x", machineId: "m-x", capabilities: [] }), "token_expired");
  // an operator key still makes both
  const op = await operatorKey(farm, "op");
  expect((await farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: op.key, name: "publisher", canPublish: true })).key).toMatch(/^fh_c_/);
  expect((await farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: op.key, name: "second" })).key).toMatch(/^fh_o_/);
  expect(await farm.t.mutation(api.consoleAccess.setClientKeyLimits, { apiKey: op.key, clientKeyId: farmKeyId, weight: 2 })).toMatchObject({ weight: 2 });
  await expectCode(farm.t.query(api.consoleAccess.minted, { apiKey: op.key, keyId: farm.orgId }), "not_found");
  expect(await checkConsistency(farm.t)).toEqual([]);
});
