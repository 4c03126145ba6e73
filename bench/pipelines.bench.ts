import { test } from "vitest";
import { api } from "../convex/_generated/api";
import { BATCH_SHARDS, batchShardOf } from "../convex/lib/dependencies";
import { FarmhandClient, type Transport } from "../extension/sdk/client";
import { measure, type Usage } from "../test/backend/metrics";
import { enrollWorker, newFarm, TEST_TYPES } from "../test/backend/setup";
import { saveFigures, type Figure } from "./results";

const MEASURES = ["bench/pipelines.bench.ts", "convex", "extension/sdk", "test/backend/metrics.ts", "test/backend/setup.ts"];

/**
 * Issue 21's figures. (1) What one parent's completion costs (documents read and written by workers:complete) for a
 * batch with one waiting child, at 1,000 and 10,000 jobs (copied in directly, as test/backend/seed.ts does): a middle completion, and the last one, which releases the
 * child (the batch's shard rows are set to count one unfinished job so that the measured completion is the last; the job
 * rows are not what a completion reads). Flat in the batch size. (2) The SDK's `map` over 100,000 payloads of 1 KiB
 * against a transport that ends each job as soon as it is followed: peak heap over the baseline.
 */
const SIZES = [1_000, 10_000];

async function completionCost(size: number): Promise<{ middle: Usage; last: Usage; released: boolean }> {
  const farm = await newFarm();
  const worker = await enrollWorker(farm, { maxConcurrentJobs: 2 });
  // one job through jobs:submit (its lane, its batch's shard row), the rest copied in directly, the shard rows counting them
  const [firstId] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "x", batchId: "big", payload: 0 }] });
  const perShard = Array.from({ length: BATCH_SHARDS }, () => 0);
  perShard[batchShardOf(firstId)]++;
  for (let done = 1; done < size; done += 2_000) {
    const ids = await farm.t.run(async (ctx) => {
      const { _id, _creationTime, ...template } = (await ctx.db.get(firstId))!;
      void _id;
      void _creationTime;
      const made: string[] = [];
      for (let i = done; i < Math.min(size, done + 2_000); i++) {
        const jobId = await ctx.db.insert("jobs", { ...template, metered: undefined, availableAt: template.availableAt + i });
        await ctx.db.insert("jobBodies", { orgId: template.orgId, jobId, part: "payload", value: i, bytes: 8 });
        made.push(jobId);
      }
      return made;
    });
    for (const id of ids) perShard[batchShardOf(id)]++;
  }
  const setShards = async (counts: number[]) =>
    await farm.t.run(async (ctx) => {
      for (const row of await ctx.db.query("batches").collect()) await ctx.db.delete(row._id);
      for (const [shard, unfinished] of counts.entries()) await ctx.db.insert("batches", { orgId: farm.orgId, batchId: "big", shard, unfinished, succeeded: 0, failed: 0 });
    });
  await setShards(perShard);
  const child = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", dependsOn: { batch: "big" } });
  const complete = async (beforeComplete?: (jobId: string) => Promise<void>) => {
    const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
    await beforeComplete?.(claim.jobId);
    return (await measure(farm.t, "mutation", api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, result: { n: 1 } })).usage;
  };
  const middle = await complete();
  // the next completion is the batch's last: its shard counts it alone, the others nothing
  const last = await complete(async (jobId) => await setShards(perShard.map((_, shard) => (shard === batchShardOf(jobId) ? 1 : 0))));
  const released = (await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: child }))!.status === "pending";
  return { middle, last, released };
}

test("a parent's completion costs the same at 1,000 and 10,000 jobs in the batch", async () => {
  const figures: Record<string, Figure> = {};
  const rows = [];
  for (const size of SIZES) rows.push({ size, ...(await completionCost(size)) });
  console.log("\nbatch size  middle reads  middle writes  last reads  last writes  child released");
  for (const r of rows) {
    console.log(`${String(r.size).padStart(10)}  ${String(r.middle.documentsRead).padStart(12)}  ${String(r.middle.documentsWritten).padStart(13)}  ${String(r.last.documentsRead).padStart(10)}  ${String(r.last.documentsWritten).padStart(11)}  ${r.released}`);
    figures[`complete_reads_batch_${r.size}`] = { value: r.middle.documentsRead, unit: "documents", target: "< 60", pass: r.middle.documentsRead < 60 };
    figures[`last_complete_reads_batch_${r.size}`] = { value: r.last.documentsRead, unit: "documents", target: "< 80, and the child released", pass: r.last.documentsRead < 80 && r.released };
    figures[`complete_writes_batch_${r.size}`] = { value: r.middle.documentsWritten, unit: "documents", target: "< 30", pass: r.middle.documentsWritten < 30 };
    figures[`last_complete_writes_batch_${r.size}`] = { value: r.last.documentsWritten, unit: "documents", target: "< 40", pass: r.last.documentsWritten < 40 };
  }
  const spread = Math.max(...rows.map((r) => r.last.documentsRead)) - Math.min(...rows.map((r) => r.last.documentsRead));
  figures.complete_reads_spread = { value: spread, unit: "documents (last completion, 10,000 − 1,000 jobs)", target: "flat: ≤ 5", pass: spread <= 5 };
  saveFigures("pipelines", figures, MEASURES);
}, 600_000);

/** A transport whose jobs end the moment they are followed (their result is the payload's index). */
function instantTransport(): Transport {
  let next = 0;
  return {
    mutation: (_ref: unknown, args: { jobs: unknown[] }) => Promise.resolve(args.jobs.map(() => `job${next++}`)),
    onUpdate: (_ref: unknown, args: { jobId: string }, cb: (job: unknown) => void) => {
      const timer = setTimeout(() => cb({ jobId: args.jobId, status: "succeeded", result: Number(args.jobId.slice(3)) }), 0);
      return () => clearTimeout(timer);
    },
    query: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  };
}

test("the SDK's map over 100,000 payloads keeps its memory bounded", async () => {
  const client = new FarmhandClient({ client: instantTransport(), clientKey: "fh_c_bench" });
  const COUNT = 100_000;
  const filler = "x".repeat(1_024);
  function* payloads() {
    for (let i = 0; i < COUNT; i++) yield { i, filler: filler + String(i) };
  }
  globalThis.gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let seen = 0;
  let ordered = true;
  for await (const result of client.map("demo.echo", payloads())) {
    if (result !== seen) ordered = false;
    seen++;
    if (seen % 1_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  const peakMiB = Math.round(((peak - baseline) / 1024 / 1024) * 10) / 10;
  const allMiB = Math.round((COUNT * 1_100) / 1024 / 1024);
  saveFigures("pipelines_map", {
    map_100k_peak_heap_over_baseline: { value: peakMiB, unit: "MiB", target: `< 64 (holding every payload would take ≥ ${allMiB})`, pass: peakMiB < 64 && seen === COUNT && ordered },
  }, MEASURES);
}, 600_000);
