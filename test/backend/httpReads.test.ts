import { describe, expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { answerOf, enrollWorker, type Enrolled, newFarm, snapshot, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

function get(farm: Farm, path: string, key: string | null = farm.clientKey) {
  return farm.t.fetch(path, { method: "GET", headers: key === null ? {} : { authorization: `Bearer ${key}` } });
}

const claimAll = (farm: Farm, w: Enrolled) => farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 4 });

async function batchOf(farm: Farm, batchId: string, n: number) {
  const jobs = Array.from({ length: n }, (_, i) => ({ type: "demo.echo", payload: { i }, batchId }));
  return await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs });
}

describe("GET /api/batches/:batchId", () => {
  test("answers jobs:batchStatus for the caller's org; an unknown batch is empty, another org's invisible", async () => {
    const farm = await newFarm();
    const ids = await batchOf(farm, "nightly 1/2", 3);
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: ids[0] });
    const res = await get(farm, `/api/batches/${encodeURIComponent("nightly 1/2")}`);
    expect(res.status).toBe(200);
    const want = await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "nightly 1/2" });
    expect(await res.json()).toEqual(want);
    expect(want).toMatchObject({ total: 3, counts: { pending: 2, canceled: 1 }, done: false });
    const other = await newFarm(farm.t, "other");
    expect(await (await get(other, `/api/batches/${encodeURIComponent("nightly 1/2")}`)).json()).toMatchObject({ total: 0, done: false });
  });

  test("refuses a missing key (401), a missing id (404) and bad percent-encoding (400)", async () => {
    const farm = await newFarm();
    expect((await get(farm, "/api/batches/b", null)).status).toBe(401);
    expect((await get(farm, "/api/batches/b", "fh_c_nope")).status).toBe(401);
    expect((await answerOf(await get(farm, "/api/batches/"))).error?.code).toBe("not_found");
    expect((await answerOf(await get(farm, "/api/batches/%E0%A4%A"))).error?.code).toBe("invalid_argument");
  });
});

describe("GET /api/jobs", () => {
  test("pages through a batch with a cursor, newest first, each job once; status filters", async () => {
    const farm = await newFarm();
    const ids = await batchOf(farm, "b1", 7);
    await batchOf(farm, "b2", 2);
    const w = await enrollWorker(farm);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { ok: true } });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(farm, `/api/jobs?batchId=b1&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { jobs: Array<{ jobId: string; batchId: string; output?: string }>; cursor: string | null };
      expect(page.jobs.length).toBeLessThanOrEqual(3);
      for (const job of page.jobs) expect(job).toMatchObject({ batchId: "b1" });
      expect(page.jobs.every((j) => j.output === undefined)).toBe(true);
      seen.push(...page.jobs.map((j) => j.jobId));
      cursor = page.cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual([...ids].reverse());
    const done = (await (await get(farm, "/api/jobs?status=succeeded")).json()) as { jobs: Array<{ jobId: string; result: unknown }>; cursor: string | null };
    expect(done).toEqual({ jobs: [expect.objectContaining({ jobId: c.jobId, result: { ok: true } })], cursor: null });
    const b1Pending = (await (await get(farm, "/api/jobs?batchId=b1&status=pending&limit=25")).json()) as { jobs: unknown[] };
    expect(b1Pending.jobs).toHaveLength(c.jobId === ids[0] ? 6 : 7);
    expect(((await (await get(farm, "/api/jobs")).json()) as { jobs: unknown[] }).jobs).toHaveLength(9);
  });

  test("a batch + status filter pages to the end through short and empty pages: every pending job once (HTTP and jobs:list)", async () => {
    const farm = await newFarm();
    // oldest first; newest first in pages of 3: [14 13 12] holds 1 pending job, [11 10 9] none, then 2, 1, 3
    const succeeds = new Set([14, 13, 11, 10, 9, 7, 4, 3]);
    const jobs = Array.from({ length: 15 }, (_, i) => ({ type: succeeds.has(i) ? "fast" : "slow", payload: { i }, batchId: "b1" }));
    const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs });
    await batchOf(farm, "b2", 2); // another batch's pending jobs, newer than all of b1's
    const w = await enrollWorker(farm, { types: ["fast"] });
    for (let claims = await claimAll(farm, w); claims.length > 0; claims = await claimAll(farm, w)) {
      for (const c of claims) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { ok: true } });
    }
    const pending = ids.filter((_, i) => !succeeds.has(i)).reverse();
    expect((await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId: "b1" })).counts).toMatchObject({ pending: 7, succeeded: 8 });

    type Page = { jobs: Array<{ jobId: string; status: string; batchId?: string }>; cursor: string | null };
    const overHttp = async (cursor: string | null): Promise<Page> => {
      const res = await get(farm, `/api/jobs?batchId=b1&status=pending&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };
    const overQuery = async (cursor: string | null): Promise<Page> => await farm.t.query(api.jobs.list, { clientKey: farm.clientKey, batchId: "b1", status: "pending", limit: 3, cursor });
    for (const listPage of [overHttp, overQuery]) {
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await listPage(cursor);
        for (const job of page.jobs) expect(job).toMatchObject({ status: "pending", batchId: "b1" });
        seen.push(...page.jobs.map((j) => j.jobId));
        sizes.push(page.jobs.length);
        cursor = page.cursor;
      } while (cursor !== null && sizes.length < 20);
      expect(seen).toEqual(pending);
      // the pages it went through: short ones and an empty one before the last
      expect(sizes.slice(0, 2)).toEqual([1, 0]);
    }
  });

  test.each([
    ["status=done", /status must be one of/],
    ["limit=0", /limit/],
    ["limit=26", /limit/],
    ["limit=2.5", /limit must be a whole number/],
    ["batch=b1", /Unknown query parameter "batch"/],
    ["cursor=garbage", /cursor/],
  ])("?%s is a 400 with a clear message and changes nothing", async (query, message) => {
    const farm = await newFarm();
    await batchOf(farm, "b1", 2);
    const before = await snapshot(farm.t);
    const res = await get(farm, `/api/jobs?${query}`);
    expect(res.status).toBe(400);
    const { error } = await answerOf(res);
    expect(error?.code).toBe("invalid_argument");
    expect(error?.message).toMatch(message);
    expect(await snapshot(farm.t)).toEqual(before);
  });
});

describe("GET /api/jobs/:id?wait=", () => {
  test("answers as soon as the job ends, with its result", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.echo" });
    const started = Date.now();
    const waiting = get(farm, `/api/jobs/${jobId}?wait=30`);
    setTimeout(() => {
      void (async () => {
        const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
        await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: { n: 42 } });
      })();
    }, 300);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ jobId, status: "succeeded", result: { n: 42 } });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(5_000);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("answers the job as it is once the wait runs out", async () => {
    const farm = await newFarm();
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.echo" });
    const started = Date.now();
    const res = await get(farm, `/api/jobs/${jobId}?wait=1`);
    expect(await res.json()).toMatchObject({ jobId, status: "pending" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  test.each(["61", "-1", "abc", "1e3", ""])("wait=%s is a 400 naming the bound", async (wait) => {
    const farm = await newFarm();
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.echo" });
    const res = await get(farm, `/api/jobs/${jobId}?wait=${wait}`);
    expect(res.status).toBe(400);
    expect((await answerOf(res)).error?.message).toMatch(/wait must be a number of seconds from 0 to 60/);
  });

  test("an unknown job is a 404 at once, wait or not", async () => {
    const farm = await newFarm();
    const other = await newFarm(farm.t, "other");
    const jobId = await other.t.mutation(api.jobs.submit, { clientKey: other.clientKey, type: "demo.echo" });
    const started = Date.now();
    expect((await get(farm, `/api/jobs/${jobId}?wait=30`)).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
