import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { LIMITS } from "../../convex/core/limits";
import { answerOf, enrollWorker, newFarm, snapshot, type Farm, TEST_TYPES } from "./setup";

function call(farm: Farm, method: string, path: string, payload?: unknown, key: string | null = farm.clientKey) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return farm.t.fetch(path, { method, headers, body: payload === undefined ? undefined : typeof payload === "string" ? payload : JSON.stringify(payload) });
}

test("POST /api/jobs submits, GET /api/jobs/:id reads, POST /api/jobs/:id/cancel cancels", async () => {
  const farm = await newFarm();
  const created = await call(farm, "POST", "/api/jobs", { type: "demo.echo", payload: { text: "hi" }, priority: 3 });
  expect(created.status).toBe(201);
  const { jobId } = await answerOf(created);
  const read = await call(farm, "GET", `/api/jobs/${jobId}`);
  expect(read.status).toBe(200);
  expect(await answerOf(read)).toMatchObject({ jobId, status: "pending", priority: 3, type: "demo.echo", output: "" });
  const canceled = await call(farm, "POST", `/api/jobs/${jobId}/cancel`);
  expect(await answerOf(canceled)).toEqual({ status: "canceled" });
  expect((await answerOf(await call(farm, "GET", `/api/jobs/${jobId}`))).status).toBe("canceled");
});

test("POST /api/jobs with a jobs array submits a batch", async () => {
  const farm = await newFarm();
  const res = await call(farm, "POST", "/api/jobs", { jobs: [{ type: "a" }, { type: "b" }] });
  expect(res.status).toBe(201);
  expect((await answerOf(res)).jobIds).toHaveLength(2);
});

test("the result and output of a finished job come back over HTTP", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const { jobId } = await answerOf(await call(farm, "POST", "/api/jobs", { type: "x" }));
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
  await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: c.leaseId, chunk: "abc" });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { n: 7 } });
  expect(await answerOf(await call(farm, "GET", `/api/jobs/${jobId}`))).toMatchObject({ status: "succeeded", output: "abc", result: { n: 7 } });
});

test("errors come back as JSON with a stable code and a fitting HTTP status, changing nothing", async () => {
  const farm = await newFarm();
  const other = await newFarm(farm.t, "other");
  const { jobId } = await answerOf(await call(other, "POST", "/api/jobs", { type: "theirs" }));
  const before = await snapshot(farm.t);
  const cases: Array<[() => Promise<Response>, number, string]> = [
    [() => call(farm, "POST", "/api/jobs", { type: "x" }, null), 401, "bad_key"],
    [() => call(farm, "POST", "/api/jobs", { type: "x" }, "fh_c_" + "Z".repeat(43)), 401, "bad_key"],
    [() => call(farm, "GET", `/api/jobs/${jobId}`), 404, "not_found"],
    [() => call(farm, "POST", `/api/jobs/${jobId}/cancel`), 404, "not_found"],
    [() => call(farm, "GET", "/api/jobs/not-an-id!"), 404, "not_found"],
    [() => call(farm, "POST", "/api/jobs/abc/retry"), 404, "not_found"],
    [() => call(farm, "POST", "/api/jobs", "{not json"), 400, "invalid_argument"],
    [() => call(farm, "POST", "/api/jobs", { type: "x", priority: -1 }), 400, "invalid_argument"],
    [() => call(farm, "POST", "/api/jobs", { type: "x", unknownField: 1 }), 400, "invalid_argument"],
    [() => call(farm, "POST", "/api/jobs", { type: "x", payload: "p".repeat(LIMITS.payloadBytes) }), 413, "too_large"],
  ];
  for (const [response, status, code] of cases) {
    const res = await response();
    expect(res.status).toBe(status);
    const answer = await answerOf(res);
    expect(answer.error?.code).toBe(code);
    expect(typeof answer.error?.message).toBe("string");
  }
  expect(await snapshot(farm.t)).toEqual(before);
});
