import { expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { submitJob } from "../../convex/queue/submit";
import { answerOf, expectCode, newFarm, snapshot, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

async function secondKey(farm: Farm, name = "other-team") {
  const { key } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name });
  return key;
}

function post(farm: Farm, body: unknown, headers: Record<string, string> = {}) {
  return farm.t.fetch("/api/jobs", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${farm.clientKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

test("an externalId is scoped to the client key: two keys' order-42 are two jobs, each key finds its own", async () => {
  const farm = await newFarm();
  const other = await secondKey(farm);
  const mine = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "order-42" });
  const theirs = await farm.t.mutation(api.jobs.submit, { clientKey: other, type: "x", externalId: "order-42" });
  expect(theirs).not.toBe(mine);
  expect(await farm.t.mutation(api.jobs.submit, { clientKey: other, type: "x", externalId: "order-42" })).toBe(theirs);
  expect((await farm.t.query(api.jobs.byExternalId, { clientKey: farm.clientKey, externalId: "order-42" }))!.jobId).toBe(mine);
  expect((await farm.t.query(api.jobs.byExternalId, { clientKey: other, externalId: "order-42" }))!.jobId).toBe(theirs);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

const changes: Array<[string, Record<string, unknown>]> = [
  ["type", { type: "y" }],
  ["payload", { payload: { n: 2 } }],
  ["priority", { priority: 5 }],
  ["requirements", { requirements: { minCores: 2 } }],
  ["validation", { validation: { quorum: 2 } }],
  ["dependsOn", { dependsOn: { batch: "b" } }],
];
test.each(changes)("the same externalId with another %s is refused idempotency_mismatch, writing nothing", async (_field, change) => {
  const farm = await newFarm();
  const base = { clientKey: farm.clientKey, type: "x", payload: { n: 1 }, externalId: "e1" };
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "p", batchId: "b" });
  const first = await farm.t.mutation(api.jobs.submit, base);
  const before = await snapshot(farm.t);
  await expectCode(farm.t.mutation(api.jobs.submit, { ...base, ...change }), "idempotency_mismatch");
  expect(await snapshot(farm.t)).toEqual(before);
  // the same spec, keys in another order, still answers with the first job
  expect(await farm.t.mutation(api.jobs.submit, { externalId: "e1", payload: { n: 1 }, type: "x", clientKey: farm.clientKey })).toBe(first);
});

test("fields outside a job's identity (maxAttempts, leaseMs, fairnessKey) do not make a repeat a mismatch", async () => {
  const farm = await newFarm();
  const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "e" });
  expect(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "e", maxAttempts: 1, fairnessKey: "u1" })).toBe(first);
});

test("a job stored before spec hashes existed answers a repeat with itself", async () => {
  const farm = await newFarm();
  const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "old" });
  await farm.t.run(async (ctx) => await ctx.db.patch(first, { specHash: undefined }));
  expect(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "other", externalId: "old" })).toBe(first);
});

test("a host app's submitJob (no client key) has its own scope per org, apart from every key's", async () => {
  const farm = await newFarm();
  const keyed = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", externalId: "inv-1" });
  const hosted = await farm.t.run(async (ctx) => await submitJob(ctx, { orgId: farm.orgId, type: "x", externalId: "inv-1" }));
  expect(hosted).not.toBe(keyed);
  expect(await farm.t.run(async (ctx) => await submitJob(ctx, { orgId: farm.orgId, type: "x", externalId: "inv-1" }))).toBe(hosted);
  await expectCode(
    farm.t.run(async (ctx) => await submitJob(ctx, { orgId: farm.orgId, type: "x", payload: 2, externalId: "inv-1" })),
    "idempotency_mismatch",
  );
});

test("a batch with a repeated externalId and another spec is refused as a whole", async () => {
  const farm = await newFarm();
  const before = await snapshot(farm.t);
  await expectCode(
    farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x", externalId: "e" }, { type: "x", payload: 1, externalId: "e" }] }),
    "idempotency_mismatch",
  );
  expect(await snapshot(farm.t)).toEqual(before);
});

test("HTTP: Idempotency-Key is the externalId; a replay answers the first job's id with Idempotent-Replayed: true", async () => {
  const farm = await newFarm();
  const first = await post(farm, { type: "x", payload: 1 }, { "Idempotency-Key": '"abc-1"' });
  expect(first.status).toBe(201);
  expect(first.headers.get("Idempotent-Replayed")).toBeNull();
  const { jobId } = await answerOf(first);
  const again = await post(farm, { type: "x", payload: 1 }, { "Idempotency-Key": "abc-1" });
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  expect((await answerOf(again)).jobId).toBe(jobId);
  expect((await farm.t.query(api.jobs.byExternalId, { clientKey: farm.clientKey, externalId: "abc-1" }))!.jobId).toBe(jobId);

  const changed = await post(farm, { type: "x", payload: 2 }, { "Idempotency-Key": "abc-1" });
  expect(changed.status).toBe(409);
  expect((await answerOf(changed)).error!.code).toBe("idempotency_mismatch");
});

test("HTTP: an Idempotency-Key that contradicts the body, is empty, or comes with a batch is refused, writing nothing", async () => {
  const farm = await newFarm();
  const before = await snapshot(farm.t);
  for (const [body, key] of [
    [{ type: "x", externalId: "a" }, "b"],
    [{ type: "x" }, '""'],
    [{ jobs: [{ type: "x" }] }, "k"],
  ] as const) {
    const res = await post(farm, body, { "Idempotency-Key": key });
    expect(res.status).toBe(400);
    expect((await answerOf(res)).error!.code).toBe("invalid_argument");
  }
  expect(await snapshot(farm.t)).toEqual(before);
});
