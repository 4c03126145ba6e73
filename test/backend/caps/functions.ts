import { getDocumentSize } from "convex/values";
import { expect } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { TX_BUDGET } from "../../../convex/core/budget";
import { batchShardOf } from "../../../convex/pipelines/dependencies";
import { LIMITS } from "../../../convex/core/limits";
import { runDue } from "../queueState";
import { enrollWorker, expectCode, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { atStep } from "./peaks";
import { BIG_TYPE, capsFarm, claim, claimAll, deadLetters, drain, fullBody, fullCheckpoint, fullChunk, fullError, manager, type Script, submitBig, summarise, utf8Bytes } from "./world";

/** Every function that reads a range or a body, driven at the documented caps. */

export async function seedOutput(farm: Farm, jobId: Id<"jobs">, from: number, to: number, script: Script = "latin", instances: Array<Id<"jobInstances">> = []): Promise<void> {
  atStep("seed");
  for (let start = from; start < to; start += 400) {
    await farm.t.run(async (ctx) => {
      for (let seq = start; seq < Math.min(to, start + 400); seq++) {
        const instance = instances.length > 0 ? { instance: instances[seq % instances.length] } : {};
        await ctx.db.insert("jobOutput", { orgId: farm.orgId, jobId, seq, chunk: fullChunk(seq, script), ...instance });
      }
    });
  }
}

/**
 * One job at every per-job cap: a 256 KiB payload, a 512 KiB checkpoint, status text at its cap, output up
 * to the per-job chunk cap (8 KiB of UTF-8 each, in `script`: a CJK or emoji chunk holds a third or a quarter
 * as many characters), a 256 KiB result; every reader of it, then its purge.
 */
export async function oneJobAtEveryCap(script: Script = "latin"): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  atStep("jobs:setWebhook");
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "https://hooks.example.com/farm" });
  atStep("jobs:submit 256 KiB");
  const externalId = "e".repeat(LIMITS.externalIdChars);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: BIG_TYPE, payload: fullBody("one"), externalId });
  atStep("workers:claim");
  const [job] = await claim(farm, op, 1);
  expect(job.payload).toBe(fullBody("one"));
  const lease = { apiKey: op.apiKey, leaseId: job.leaseId };
  atStep("workers:checkpoint 512 KiB");
  await farm.t.mutation(api.workers.checkpoint, { ...lease, data: fullCheckpoint(7) });
  atStep("workers:heartbeat with status text at its cap");
  await farm.t.mutation(api.workers.heartbeat, { ...lease, progress: 0.5, status: "s".repeat(LIMITS.statusTextChars) });
  atStep("workers:output");
  await farm.t.mutation(api.workers.output, { ...lease, chunk: fullChunk(0, script) });
  atStep("workers:output one character past the chunk cap");
  await expectCode(farm.t.mutation(api.workers.output, { ...lease, chunk: `${fullChunk(1, script)}${script === "emoji" ? "😀" : "字"}` }), "too_large");
  await seedOutput(farm, jobId, 1, LIMITS.outputChunksPerJob, script);
  atStep("workers:output past the per-job cap");
  await expectCode(farm.t.mutation(api.workers.output, { ...lease, chunk: fullChunk(LIMITS.outputChunksPerJob, script) }), "too_large");
  atStep("workers:checkKey");
  expect(await farm.t.query(api.workers.checkKey, { apiKey: op.apiKey })).toMatchObject({ workerId: op.workerId });
  atStep("jobs:get while running, full output");
  const running = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
  expect(running).toMatchObject({ status: "running", outputTruncated: true });
  atStep("workers:complete 256 KiB");
  await farm.t.mutation(api.workers.complete, { ...lease, result: fullBody("result") });
  atStep("jobs:get");
  const done = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
  expect(done).toMatchObject({ status: "succeeded", result: fullBody("result") });
  const newest = Array.from({ length: LIMITS.outputChunksReturned }, (_, i) => fullChunk(LIMITS.outputChunksPerJob - LIMITS.outputChunksReturned + i, script));
  expect(utf8Bytes(done!.output)).toBe(utf8Bytes(newest.join("")));
  atStep("jobs:byExternalId");
  expect(await farm.t.query(api.jobs.byExternalId, { clientKey: farm.clientKey, externalId })).toMatchObject({ jobId, result: fullBody("result") });
  atStep("GET /api/jobs/:id");
  const res = await farm.t.fetch(`/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${farm.clientKey}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { result: unknown }).result).toBe(fullBody("result"));
  atStep("console:job");
  const page = await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId });
  expect(page).toMatchObject({ payload: fullBody("one"), result: fullBody("result") });
  atStep("console:jobOutput");
  let fromSeq = 0;
  for (let pages = 0; pages < 60; pages++) {
    const out = await farm.t.query(api.console.jobOutput, { apiKey: op.apiKey, jobId, fromSeq });
    fromSeq = out.nextSeq;
    if (!out.more) break;
  }
  expect(fromSeq).toBe(LIMITS.outputChunksPerJob);
  atStep("webhooks:beginAttempt with a 256 KiB result");
  const delivery = await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").first());
  const send = await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: delivery!._id });
  expect(JSON.parse(send!.body)).toMatchObject({ jobId, result: fullBody("result") });
  atStep("admin:purge of 10,000 chunks");
  let purged = false;
  for (let calls = 0; !purged && calls < 200; calls++) purged = await farm.t.mutation(internal.admin.purge, { jobId });
  expect(purged).toBe(true);
  atStep("seed");
  expect(await farm.t.run(async (ctx) => ({ job: await ctx.db.get(jobId), chunk: await ctx.db.query("jobOutput").first() }))).toEqual({ job: null, chunk: null });
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** 200 lanes (the per-org cap), each headed by a 256 KiB job: overviews, the summariser, watch, claims and dispatch. */
export async function twoHundredLanes(): Promise<void> {
  const farm = await capsFarm();
  const caps = Array.from({ length: LIMITS.lanesPerOrg }, (_, i) => `lane-${i}`);
  await submitBig(farm, LIMITS.lanesPerOrg, { requiredCapabilities: (i) => [caps[i]] });
  const op = await manager(farm, caps);
  atStep("summary:refresh over 200 lanes");
  await summarise(farm);
  atStep("console:overview over 200 lanes");
  expect((await farm.t.query(api.console.overview, { apiKey: op.apiKey })).counts.pending).toBe(LIMITS.lanesPerOrg);
  atStep("farm:overview over 200 lanes");
  expect((await farm.t.query(api.farm.overview, { apiKey: op.apiKey })).lanes).toHaveLength(LIMITS.lanesPerOrg);
  atStep("workers:claim heads over 200 lanes");
  const first = await claim(farm, op);
  expect(first.length).toBeGreaterThan(0);
  // another worker waits on every lane; the dispatcher offers it what is left, a claim's byte budget at a time
  const other = await enrollWorker(farm, { name: "other", capabilities: caps, types: [BIG_TYPE], maxConcurrentJobs: LIMITS.maxConcurrentJobs });
  atStep("dispatch:run and claims over 200 lanes");
  const taken = await claimAll(farm, other, LIMITS.claimMax);
  expect(taken.length).toBe(LIMITS.claimMax);
  await runDue(farm.t, 8);
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** 100 dead letters of 256 KiB with full errors: every list of them, the summary, a retry, a bulk purge. */
export async function hundredDeadLetters(): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  const ids = await deadLetters(farm, LIMITS.deadLettersListed, op);
  atStep("farm:deadLetters 100");
  const listed = await farm.t.query(api.farm.deadLetters, { apiKey: op.apiKey, limit: LIMITS.deadLettersListed });
  expect(listed.length).toBe(LIMITS.deadLettersListed);
  expect(listed.every((d) => d.error === fullError(d.jobId))).toBe(true);
  atStep("admin:listDead 100");
  expect(await farm.t.query(internal.admin.listDead, { orgId: farm.orgId })).toHaveLength(LIMITS.deadLettersListed);
  atStep("summary:refresh with 100 dead letters");
  await summarise(farm);
  atStep("farm:overview with dead letters");
  expect((await farm.t.query(api.farm.overview, { apiKey: op.apiKey })).deadLetterList).toHaveLength(LIMITS.summaryDeadLetters);
  atStep("console:jobs filter dead");
  const page = await farm.t.query(api.console.jobs, { apiKey: op.apiKey, filter: { status: "dead" }, paginationOpts: { numItems: 100, cursor: null } });
  expect(page.page).toHaveLength(100);
  atStep("console:job of a dead letter");
  expect(await farm.t.query(api.console.job, { apiKey: op.apiKey, jobId: ids[0] })).toMatchObject({ error: fullError(ids[0]) });
  atStep("consoleActions:retryJob");
  await farm.t.mutation(api.consoleActions.retryJob, { apiKey: op.apiKey, jobId: ids[0] });
  atStep("consoleActions:purgeDead of 99 big dead letters");
  const { bulkId } = await farm.t.mutation(api.consoleActions.purgeDead, { apiKey: op.apiKey });
  await drain(farm, "bulkStep");
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId })).toMatchObject({ done: true, affected: 99 });
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** Copies of a job row (with its payload beside it) straight into the database, counted in its lane (not in the metrics). */
async function seedCopies(farm: Farm, of: Id<"jobs">, count: number): Promise<void> {
  atStep("seed");
  const source = await farm.t.run(async (ctx) => await ctx.db.get(of));
  const { _id, _creationTime, ...template } = source!;
  for (let done = 0; done < count; done += 500) {
    const n = Math.min(500, count - done);
    await farm.t.run(async (ctx) => {
      const perShard = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const jobId = await ctx.db.insert("jobs", { ...template, metered: undefined, externalId: `copy-${done + i}-`.padEnd(LIMITS.externalIdChars, "x") });
        await ctx.db.insert("jobBodies", { orgId: farm.orgId, jobId, part: "payload", value: null, bytes: 4 });
        perShard.set(batchShardOf(jobId), (perShard.get(batchShardOf(jobId)) ?? 0) + 1);
      }
      // as jobs:submit counts them: in their lane and their client key
      await ctx.db.insert("counterDeltas", { orgId: farm.orgId, laneId: template.laneId, pending: n, ...(template.clientKeyId ? { clientKeyId: template.clientKeyId } : {}) });
      // the copies count in their batch's shard rows, as jobs:submit counts them
      const batchId = template.batchId;
      if (batchId === undefined) return;
      for (const [shard, count] of perShard) {
        const row = await ctx.db
          .query("batches")
          .withIndex("by_org_batch", (q) => q.eq("orgId", farm.orgId).eq("batchId", batchId).eq("shard", shard))
          .unique();
        if (row) await ctx.db.patch(row._id, { unfinished: row.unfinished + count });
        else await ctx.db.insert("batches", { orgId: farm.orgId, batchId, shard, unfinished: count, succeeded: 0, failed: 0 });
      }
    });
  }
  void _id;
  void _creationTime;
}

/**
 * A batch of 500 at every cap a job row has (type, external id, batch id, 16 long capabilities) with payloads
 * to the batch cap; more such rows in one batch id than its status reads: its status (whose byte budget ends the count early:
 * `truncated`), its console page, a bulk cancel of all of them.
 */
export async function fiveHundredJobBatches(): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  const batchId = "b".repeat(LIMITS.batchIdChars);
  const requiredCapabilities = Array.from({ length: LIMITS.capabilitiesPerJob }, (_, i) => `${i}`.padEnd(64, "c"));
  const payloadBytes = Math.floor(LIMITS.batchPayloadBytes / LIMITS.batchCount);
  atStep("jobs:submitBatch of 500 at the caps");
  const jobs = Array.from({ length: LIMITS.batchCount }, (_, i) => ({
    // the longest type a job routed by its type may have: a capability's name (64; typeChars' 128 is for app types)
    type: "t".repeat(64),
    payload: fullBody(i, payloadBytes),
    requiredCapabilities,
    externalId: `${i}-`.padEnd(LIMITS.externalIdChars, "x"),
    batchId,
  }));
  const ids = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs });
  expect(ids).toHaveLength(LIMITS.batchCount);
  // enough rows that batchStatus's byte budget, not its row cap, ends the count
  const rowBytes = await farm.t.run(async (ctx) => getDocumentSize((await ctx.db.get(ids[0]))!));
  const copies = Math.ceil(TX_BUDGET.rangeReadBytes / rowBytes) + 100 - LIMITS.batchCount;
  await seedCopies(farm, ids[0], copies);
  atStep("jobs:batchStatus over the byte budget's worth of jobs at the row caps");
  const status = await farm.t.query(api.jobs.batchStatus, { clientKey: farm.clientKey, batchId });
  expect(status.truncated).toBe(true);
  expect(status.total).toBeGreaterThan(LIMITS.batchCount);
  expect(status.counts.pending).toBe(status.total);
  atStep("console:jobs by batch id");
  const page = await farm.t.query(api.console.jobs, { apiKey: op.apiKey, filter: { batchId }, paginationOpts: { numItems: 100, cursor: null } });
  expect(page.page).toHaveLength(100);
  atStep("consoleActions:bulk cancel of them all");
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId } });
  await drain(farm, "bulkStep", 400);
  expect(await farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId })).toMatchObject({ done: true, affected: LIMITS.batchCount + copies });
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** A 256 KiB result (as JSON) that is a document of about 1 MiB: arrays of small numbers (8 bytes each stored). */
// 3 × 8,192 numbers: 49 KB of JSON, 216 KiB stored (a number takes 9 bytes), the most of them a result may hold
const denseResult = (i: number): number[][] => Array.from({ length: 3 }, (_, k) => [k === 0 ? i : 0, ...Array<number>(8_191).fill(0)]);

/**
 * 25 succeeded jobs (a full jobs:list page) each holding such a result: every page of jobs:list, GET /api/jobs and
 * a child's workers:inputs stays within the read budget, and paging to the end lists every job once.
 */
export async function fullListPageOfDenseResults(): Promise<void> {
  const farm = await capsFarm();
  const op = await manager(farm);
  const ids = await submitBig(farm, 25, { bytes: 64 });
  for (const job of await claimAll(farm, op, 25)) {
    atStep("workers:complete a 216 KiB document of numbers");
    await farm.t.mutation(api.workers.complete, { apiKey: op.apiKey, leaseId: job.leaseId, result: denseResult(ids.indexOf(job.jobId)) });
  }
  const listed: Array<Id<"jobs">> = [];
  let cursor: string | null = null;
  for (let pages = 0; pages === 0 || cursor !== null; pages++) {
    expect(pages).toBeLessThan(25);
    atStep("jobs:list limit 25 of 216 KiB results");
    const page: { jobs: Array<{ jobId: Id<"jobs">; result: unknown }>; cursor: string | null } = await farm.t.query(api.jobs.list, { clientKey: farm.clientKey, limit: 25, cursor });
    expect(page.jobs.length).toBeGreaterThan(0);
    for (const job of page.jobs) expect(job.result).toEqual(denseResult(ids.indexOf(job.jobId)));
    listed.push(...page.jobs.map((j) => j.jobId));
    cursor = page.cursor;
  }
  expect(listed).toEqual([...ids].reverse());
  atStep("GET /api/jobs?limit=25 of 216 KiB results");
  const res = await farm.t.fetch("/api/jobs?limit=25", { headers: { authorization: `Bearer ${farm.clientKey}` } });
  expect(res.status).toBe(200);
  const first = (await res.json()) as { jobs: unknown[]; cursor: string | null };
  expect(first.jobs.length).toBeGreaterThan(0);
  expect(first.cursor).not.toBeNull();
  // a child of all 25 reads their results through workers:inputs, a page at a time
  atStep("jobs:submit a child of the 25");
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: BIG_TYPE, dependsOn: { jobs: ids } });
  const [lease] = await claim(farm, op, 1);
  expect(lease.jobId).toBe(child);
  const inputs: Array<Id<"jobs">> = [];
  let at: string | null = null;
  for (let pages = 0; pages === 0 || at !== null; pages++) {
    expect(pages).toBeLessThan(25);
    atStep("workers:inputs of 216 KiB results");
    const page: { page: Array<{ jobId: Id<"jobs">; result: unknown }>; cursor: string | null } = await farm.t.query(api.workers.inputs, { apiKey: op.apiKey, leaseId: lease.leaseId, cursor: at });
    for (const row of page.page) expect(row.result).toEqual(denseResult(ids.indexOf(row.jobId)));
    inputs.push(...page.page.map((row) => row.jobId));
    at = page.cursor;
  }
  expect(inputs).toEqual(ids);
  atStep("seed");
  expect(await checkConsistency(farm.t)).toEqual([]);
}
