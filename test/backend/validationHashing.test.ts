import { describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { canonicalJson } from "../../convex/core/canonical";
import { LIMITS } from "../../convex/core/limits";
import { jsonBytes } from "../../convex/core/validate";
import { jobRow } from "./queueState";
import { newFarm, type Farm } from "./setup";
import { consistent, donor, type Donor, instanceLease, submitReplicated, useReplicationClock } from "./validationDonors";

useReplicationClock();

/** The largest byte result a worker may return: its base64 JSON just under the result cap. */
const LARGEST_BYTES = Math.floor(((LIMITS.resultBytes - 32) * 3) / 4);

async function complete(farm: Farm, worker: Donor, jobId: Id<"jobs">, result: unknown) {
  const leaseId = await instanceLease(farm, worker, jobId);
  vi.advanceTimersByTime(1_000);
  return await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId, result });
}

/** Two workers return `first` then `second` for one quorum-2 job: the job's status after the second. */
async function twoResults(first: unknown, second: unknown) {
  const farm = await newFarm();
  const jobId = await submitReplicated(farm, { quorum: 2 });
  await complete(farm, await donor(farm, "a"), jobId, first);
  const { status } = await complete(farm, await donor(farm, "b"), jobId, second);
  await consistent(farm);
  return { farm, jobId, status };
}

describe("canonical JSON spells every value apart", () => {
  test("NaN, Infinity, -Infinity and null; -0 and 0; a bigint and its digits as a string", () => {
    const spelled = [NaN, Infinity, -Infinity, null, -0, 0, 1n, "1"].map((v) => canonicalJson(v));
    expect(new Set(spelled).size).toBe(spelled.length);
    // nested too, and object keys still sorted
    expect(canonicalJson({ b: [NaN], a: -0 })).not.toBe(canonicalJson({ a: 0, b: [null] }));
    expect(canonicalJson({ b: 1, a: { d: 1, c: "x" } })).toBe('{"a":{"c":"x","d":1},"b":1}');
  });

  test("bytes of the largest allowed result hash without overflowing the stack", () => {
    const bytes = new Uint8Array(LARGEST_BYTES).map((_, i) => i % 251).buffer;
    expect(jsonBytes(bytes)).toBeLessThanOrEqual(LIMITS.resultBytes);
    const spelled = canonicalJson(bytes);
    expect(spelled.length).toBeGreaterThan(LARGEST_BYTES);
    const other = new Uint8Array(bytes.slice(0));
    other[LARGEST_BYTES - 1] ^= 1;
    expect(canonicalJson(other.buffer)).not.toBe(spelled);
  });
});

describe("results that only looked alike no longer agree", () => {
  test.each([
    ["NaN and null", NaN, null],
    ["Infinity and null", Infinity, null],
    ["-0 and 0", -0, 0],
    ["a bigint and a string", 12n, "12"],
    ["{ x: NaN } and { x: null }", { x: NaN }, { x: null }],
  ])("%s: the job wants a third result", async (_name, first, second) => {
    const { farm, jobId, status } = await twoResults(first, second);
    expect(status).toBe("pending");
    expect((await jobRow(farm.t, jobId)).validation).toMatchObject({ started: 2 });
  });

  test("the largest byte results agree when equal and succeed with those bytes", async () => {
    const bytes = () => new Uint8Array(LARGEST_BYTES).map((_, i) => (i * 7) % 256).buffer;
    const { farm, jobId, status } = await twoResults(bytes(), bytes());
    expect(status).toBe("succeeded");
    const view = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
    expect(new Uint8Array(view!.result as ArrayBuffer)).toEqual(new Uint8Array(bytes()));
  });
});

describe("the stored result is the agreed value", () => {
  test.each([
    ["-0", -0],
    ["NaN", NaN],
    ["a bigint", 12n],
    ["an object with keys out of order", { b: { d: 2, c: [Infinity] }, a: 2 }],
  ])("%s: the job's result is that value exactly", async (_name, value) => {
    const { farm, jobId, status } = await twoResults(value, value);
    expect(status).toBe("succeeded");
    const { result } = (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId }))!;
    expect(canonicalJson(result)).toBe(canonicalJson(value));
    expect(Object.is(result, value) || typeof value === "object").toBe(true);
  });
});
