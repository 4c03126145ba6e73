import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { enrollWorker, expectCode, newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

// jobs:list stops a page at its byte budget (4 MiB of jobs and results) and resumes inside the index page after the
// job it listed last; the caps suite (test/backend/caps) holds the read peak, this the cursor.

/** 216 KiB as a document (49 KB of JSON): arrays of small numbers, 9 bytes each stored, the most a result may take. */
const dense = (i: number): number[][] => Array.from({ length: 3 }, (_, k) => [k === 0 ? i : 0, ...Array<number>(8_191).fill(0)]);
const RESULTS = 24;

type Page = { jobs: Array<{ jobId: Id<"jobs">; result: unknown }>; cursor: string | null };

async function succeededWithDenseResults(farm: Farm, n: number): Promise<Array<Id<"jobs">>> {
  const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: n }, (_, i) => ({ type: "x", payload: i })) });
  const w = await enrollWorker(farm, { maxConcurrentJobs: n });
  const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["x"], max: n });
  for (const c of claims) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: dense(ids.indexOf(c.jobId)) });
  return ids;
}

const list = (farm: Farm, cursor: string | null, limit = 25): Promise<Page> => farm.t.query(api.jobs.list, { clientKey: farm.clientKey, limit, cursor });

test("a page of 216 KiB results ends at the byte budget; its cursor lists the rest of the index page, then the next", async () => {
  const farm = await newFarm();
  const ids = await succeededWithDenseResults(farm, RESULTS);
  const newestFirst = [...ids].reverse();
  const first = await list(farm, null, 20);
  // 4 MiB holds 18 such results; the 19th spends it and ends the page short of its 20
  expect(first.jobs.map((j) => j.jobId)).toEqual(newestFirst.slice(0, 19));
  expect(first.jobs.every((j) => JSON.stringify(j.result) === JSON.stringify(dense(ids.indexOf(j.jobId))))).toBe(true);
  expect(first.cursor).not.toBeNull();
  // the rest of that index page of 20, then the next index page
  const second = await list(farm, first.cursor, 20);
  expect(second.jobs.map((j) => j.jobId)).toEqual(newestFirst.slice(19, 20));
  const third = await list(farm, second.cursor, 20);
  expect(third.jobs.map((j) => j.jobId)).toEqual(newestFirst.slice(20));
  expect(third.cursor).toBeNull();
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("when the job listed last is gone before the next page, the listing resumes after its place: nothing skipped", async () => {
  const farm = await newFarm();
  const ids = await succeededWithDenseResults(farm, RESULTS);
  const newestFirst = [...ids].reverse();
  const first = await list(farm, null, 25);
  const last = first.jobs.at(-1)!.jobId;
  expect(last).toBe(newestFirst[18]);
  await farm.t.run(async (ctx) => await ctx.db.delete(last));
  expect((await list(farm, first.cursor, 25)).jobs.map((j) => j.jobId)).toEqual(newestFirst.slice(19));
});

test("a made-up inside cursor is refused with invalid_argument", async () => {
  const farm = await newFarm();
  for (const cursor of ["fh.inside~1~0~x~", "fh.inside~26~0~x~", "fh.inside~5~NaN~x~", "fh.inside~5~1~~"]) {
    await expectCode(list(farm, cursor), "invalid_argument");
  }
});
