import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { answerOf, enrollWorker, expectCode, newFarm, TEST_TYPES } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/** A submitter's W3C trace context is kept with its job and handed to each worker that runs it. */

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

test("a job submitted with a traceparent hands it to its worker with every claim, retries too; one without has none", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const traced = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", traceparent: PARENT, maxAttempts: 2 });
  const [first] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(first).toMatchObject({ jobId: traced, traceparent: PARENT });
  await farm.t.mutation(api.workers.release, { apiKey: w.apiKey, leaseId: first.leaseId });
  const [again] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(again).toMatchObject({ jobId: traced, traceparent: PARENT });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: again.leaseId });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [plain] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect("traceparent" in plain).toBe(false);
});

test("a traceparent that is not one is refused as invalid_argument, and nothing is queued", async () => {
  const farm = await newFarm();
  const bad = [
    "",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", // no flags
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // upper case
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // all-zero trace id
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // all-zero parent id
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
    `${PARENT}-more`, // version 00 has exactly four fields
  ];
  for (const traceparent of bad) await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", traceparent }), "invalid_argument");
  await expectCode(farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x" }, { type: "x", traceparent: "nope" }] }), "invalid_argument");
  expect(await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).toEqual([]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a later version's traceparent keeps its four fields", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", traceparent: `01${PARENT.slice(2)}-what-comes-later` });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  expect(claim.traceparent).toBe(`01${PARENT.slice(2)}`);
});

test("POST /api/jobs takes the traceparent header for every job that does not give its own; a bad one is a 400", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 8 });
  const post = (body: unknown, traceparent?: string) =>
    farm.t.fetch("/api/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json", ...(traceparent ? { traceparent } : {}) },
      body: JSON.stringify(body),
    });
  const own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const single = await answerOf(await post({ type: "x", payload: 1 }, PARENT));
  const batch = await answerOf(await post({ jobs: [{ type: "x", payload: 2 }, { type: "x", payload: 3, traceparent: own }] }, PARENT));
  const refused = await post({ type: "x" }, "00-nonsense");
  expect(refused.status).toBe(400);
  expect((await answerOf(refused)).error?.code).toBe("invalid_argument");
  const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 8 });
  const byJob = new Map(claims.map((c) => [c.jobId as string, c.traceparent]));
  expect([byJob.get(single.jobId!), ...batch.jobIds!.map((id) => byJob.get(id))]).toEqual([PARENT, PARENT, own]);
  expect(claims).toHaveLength(3);
});

test("POST /api/jobs with seal and a traceparent header: the batch is sealed and every job carries the trace", async () => {
  const farm = await newFarm();
  const response = await farm.t.fetch("/api/jobs", {
    method: "POST",
    headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json", traceparent: PARENT },
    body: JSON.stringify({ jobs: [{ type: "x", batchId: "traced" }, { type: "x", batchId: "traced" }], seal: true }),
  });
  expect(response.status).toBe(201);
  const { jobIds } = await answerOf(response);
  expect(await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "traced" })).toMatchObject({ sealed: true, total: 2 });
  const jobs = await farm.t.run(async (ctx) => await Promise.all(jobIds!.map((id) => ctx.db.get(id as never))));
  expect(jobs.map((j) => (j as { traceparent?: string } | null)?.traceparent)).toEqual([PARENT, PARENT]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});
