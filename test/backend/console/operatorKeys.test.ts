import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { checkConsistency } from "../sweep/consistency";
import { enrollWorker, expectCode, newFarm, refreshSummaries } from "../setup";

afterEach(() => vi.useRealTimers());

test("admin:createOperatorKey makes an fh_o_ key that opens every console function of its org, and only its org", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  const { key, operatorKeyId } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "alice" });
  expect(key).toMatch(/^fh_o_[A-Za-z0-9_-]{43}$/);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const foreignJob = await other.t.mutation(api.jobs.submit, { clientKey: other.clientKey, type: "x" });

  await refreshSummaries(farm.t);
  const overview = await farm.t.query(api.console.overview, { apiKey: key });
  expect(overview.counts.pending).toBe(1);
  const page = await farm.t.query(api.console.jobs, { apiKey: key, filter: {}, paginationOpts: { numItems: 10, cursor: null } });
  expect(page.page.map((j) => j.jobId)).toEqual([jobId]);
  expect(await farm.t.query(api.console.job, { apiKey: key, jobId: foreignJob })).toBeNull();
  expect(await farm.t.mutation(api.consoleActions.cancelJob, { apiKey: key, jobId })).toMatchObject({ status: "canceled" });
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: key, action: "retry", filter: { status: "dead" } });
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: key, bulkId })).toMatchObject({ action: "retry" });
  const bulkRow = await farm.t.run(async (ctx) => await ctx.db.get(ctx.db.normalizeId("bulkOps", bulkId)!));
  expect(bulkRow).toMatchObject({ byOperator: operatorKeyId });
  expect(bulkRow?.by).toBeUndefined();

  // Access: its own row is marked, the list shows the prefix only
  const access = await farm.t.query(api.consoleAccess.list, { apiKey: key });
  expect(access.operatorKeys).toEqual([expect.objectContaining({ operatorKeyId, name: "alice", keyPrefix: key.slice(0, 9), revoked: false, isMe: true })]);
  expect(JSON.stringify(access)).not.toContain(key);
  // the other org's console does not list it
  const otherKey = (await other.t.mutation(internal.admin.createOperatorKey, { orgId: other.orgId, name: "bob" })).key;
  expect((await other.t.query(api.consoleAccess.list, { apiKey: otherKey })).operatorKeys.map((k) => k.name)).toEqual(["bob"]);
  await expectCode(other.t.mutation(api.consoleAccess.revokeOperatorKey, { apiKey: otherKey, operatorKeyId }), "not_found");
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("an operator key is not a worker key: the worker API refuses it", async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "alice" });
  await expectCode(farm.t.query(api.workers.checkKey, { apiKey: key }), "bad_key");
  await expectCode(farm.t.mutation(api.workers.claim, { apiKey: key, capabilities: [] }), "bad_key");
  await expectCode(farm.t.query(api.farm.overview, { apiKey: key }), "bad_key");
});

test("operator keys made and revoked in the console: a revoked one stops at once; the key in use cannot revoke itself", async () => {
  const farm = await newFarm();
  const { key: first } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "first" });
  const made = await farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: first, name: "second" });
  expect(made.key).toMatch(/^fh_o_/);
  expect((await farm.t.query(api.console.overview, { apiKey: made.key })).counts.pending).toBe(0);
  await expectCode(farm.t.mutation(api.consoleAccess.revokeOperatorKey, { apiKey: made.key, operatorKeyId: made.operatorKeyId }), "invalid_argument");
  await farm.t.mutation(api.consoleAccess.revokeOperatorKey, { apiKey: first, operatorKeyId: made.operatorKeyId });
  await expectCode(farm.t.query(api.console.overview, { apiKey: made.key }), "revoked");
  await expectCode(farm.t.mutation(api.consoleAccess.createClientKey, { apiKey: made.key, name: "x" }), "revoked");
  const listed = await farm.t.query(api.consoleAccess.list, { apiKey: first });
  expect(listed.operatorKeys.map((k) => [k.name, k.revoked, k.isMe])).toEqual([["second", true, false], ["first", false, true]]);
  await expectCode(farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: first, name: "   " }), "invalid_argument");
  // the internal revoke too
  const { key: third, operatorKeyId } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "third" });
  await farm.t.mutation(internal.admin.revokeOperatorKey, { operatorKeyId });
  await expectCode(farm.t.query(api.consoleAccess.list, { apiKey: third }), "revoked");
});

test("wrong prefix, unknown and malformed operator keys are refused clearly", async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "alice" });
  for (const wrong of [farm.clientKey, key.replace("fh_o_", "fh_c_"), key.replace("fh_o_", "FH_O_"), "fh_o_", "fh_o_" + "A".repeat(43), key + "x", ""]) {
    await expectCode(farm.t.query(api.console.overview, { apiKey: wrong }), "bad_key");
  }
  await expectCode(farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "" }), "invalid_argument");
});

test("a worker key with canManage still opens the console (existing grants keep working), but makes no operator key; without it, forbidden", async () => {
  const farm = await newFarm();
  const manager = await enrollWorker(farm, { canManage: true, name: "old-operator" });
  const donor = await enrollWorker(farm, { name: "donor" });
  const listed = (await farm.t.query(api.console.workers, { apiKey: manager.apiKey })).page;
  expect(listed.map((w) => [w.name, w.isMe]).sort()).toEqual([["donor", false], ["old-operator", true]]);
  await expectCode(farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: manager.apiKey, name: "replacement" }), "forbidden");
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "replacement" });
  expect((await farm.t.query(api.consoleAccess.list, { apiKey: key })).operatorKeys.map((k) => k.name)).toEqual(["replacement"]);
  await expectCode(farm.t.query(api.console.overview, { apiKey: donor.apiKey }), "forbidden");
  await expectCode(farm.t.mutation(api.consoleAccess.createOperatorKey, { apiKey: donor.apiKey, name: "sneaky" }), "forbidden");
  // replacing the grant: the operator key revokes the old managing worker, whose key then opens nothing
  await farm.t.mutation(api.consoleAccess.revokeWorker, { apiKey: key, workerId: manager.workerId });
  await expectCode(farm.t.query(api.console.overview, { apiKey: manager.apiKey }), "revoked");
  expect((await farm.t.query(api.console.workers, { apiKey: key })).page.every((w) => !w.isMe)).toBe(true);
});

test("subscribed console queries do not read the clock: the same data answers the same as time passes", async () => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 23, 10));
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, capabilities: ["cpu"] });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["gpu"] });
  await farm.t.mutation(api.consoleAccess.createEnrollment, { apiKey: op.apiKey, capabilities: [], ttlMs: 60_000 });
  const apiKey = op.apiKey;
  const weekOf = Date.UTC(2026, 10, 23);
  const answers = async () => ({
    overview: await farm.t.query(api.console.overview, { apiKey }),
    workers: await farm.t.query(api.console.workers, { apiKey }),
    leaderboard: await farm.t.query(api.console.leaderboard, { apiKey, weekOf }),
    access: await farm.t.query(api.consoleAccess.list, { apiKey }),
  });
  const before = await answers();
  vi.advanceTimersByTime(2 * 3_600_000); // the worker has gone quiet, the token has expired, the hour has turned
  expect(await answers()).toEqual(before);
  // …and the timestamps say what the console derives: offline since, expired since
  expect(before.workers.page[0].onlineUntil).toBeLessThan(Date.now());
  expect(before.access.enrollments.find((e) => e.workerId === undefined)!.expiresAt).toBeLessThan(Date.now());
});
