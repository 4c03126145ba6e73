import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../../convex/_generated/api";
import { enrollWorker, expectCode, newFarm, snapshot, TEST_TYPES } from "../setup";

/** Bugs the sweeps found in convex/, each pinned by a test. */

afterEach(() => {
  vi.useRealTimers();
});

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const UNSTORABLE: Array<[string, unknown]> = [
  ["nested 60 deep", nested(60)],
  ["an array of 9000 items", Array.from({ length: 9_000 }, () => 0)],
  ["an object of 1100 fields", Object.fromEntries(Array.from({ length: 1_100 }, (_, i) => [`f${i}`, i]))],
  ["an empty field name", { "": 1 }],
  ["a field name starting with _", { _id: "x" }],
];

test("a payload no document can hold is refused as invalid_argument, not by a system error at insert", async () => {
  const farm = await newFarm();
  const before = await snapshot(farm.t);
  for (const [, payload] of UNSTORABLE) {
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload }), "invalid_argument");
    await expectCode(
      farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "ok" }, { type: "x", payload }] }),
      "invalid_argument",
    );
  }
  expect(await snapshot(farm.t)).toEqual(before);
  // a deep but storable payload still goes through
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", payload: nested(40) });
  expect((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!.status).toBe("pending");
});

test("a result no document can hold is refused and the job keeps running under its lease", async () => {
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  for (const [, result] of UNSTORABLE) {
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, result }), "invalid_argument");
  }
  const done = await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, result: { ok: 1 } });
  expect(done).toEqual({ status: "succeeded" });
});

test("HTTP bodies that cannot become Convex arguments answer 400 with a JSON error, not a 500", async () => {
  const farm = await newFarm();
  const before = await snapshot(farm.t);
  const bodies = [
    `{"type":"x","payload":{"$gt":""}}`,
    `{"type":"x","payload":{"é":1}}`,
    `{"$where":"1","type":"x"}`,
    `{"jobs":[null]}`,
    `{"jobs":[{"type":"a"},"b"]}`,
    `{"jobs":[[]]}`,
    `{"jobs":[{"type":"a"}],"priority":5}`,
    `{"jobs":[{"type":"a"}],"clientKey":"fh_c_x"}`,
  ];
  for (const body of bodies) {
    const res = await farm.t.fetch("/api/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" },
      body,
    });
    expect(res.status, body).toBe(400);
    const answer = (await res.json()) as { error: { code: string; message: string } };
    expect(answer.error.code).toBe("invalid_argument");
    expect(answer.error.message.length).toBeGreaterThan(0);
  }
  expect(await snapshot(farm.t)).toEqual(before);
});

test("priority -0 is priority 0: it keeps its FIFO place among priority-0 jobs", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "first", priority: -0 });
  vi.advanceTimersByTime(5_000); // further apart than the claim's FIFO slack
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "second", priority: 0 });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  expect(claim.jobId).toBe(first);
  expect(Object.is((await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: first }))!.priority, 0)).toBe(true);
});
