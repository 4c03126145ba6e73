import { test, vi } from "vitest";
import { api } from "../convex/_generated/api";
import { BATCH_SHARDS, batchShardOf } from "../convex/pipelines/dependencies";
import { atStep, capsBackend, CAPS_TARGETS, recordPeaks, stopRecording } from "../test/backend/caps/peaks";
import { FarmhandClient, type Transport } from "../extension/sdk/client";
import { measure, type Usage } from "../test/backend/metrics";
import { enrollWorker, newFarm, TEST_TYPES } from "../test/backend/setup";
import { saveFigures, type Figure } from "./results";

const MEASURES = ["bench/pipelines.bench.ts", "convex", "extension/sdk", "test/backend/metrics.ts", "test/backend/setup.ts", "test/backend/caps/peaks.ts"];

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

/**
 * Issue 30's figure: canceling the root of a 700-deep chain. The functions it sets off (the root's cancel, then one
 * dependencies:settle page per level, pipelines/settlements.ts) are counted until no settlement is left: the cancel plus every
 * scheduled function that ran since (convex-test's own bookkeeping transactions around each scheduled run are not
 * counted); the largest bytes one transaction read and wrote come from convex-test's accounting, and the backend
 * refuses any transaction past 8 MiB read or 4 MiB written (capsBackend).
 */
test("canceling the root of a 700-deep chain: transactions used, and the most one reads and writes", async () => {
  const DEPTH = 700;
  vi.useFakeTimers();
  try {
    atStep("seed");
    const farm = await newFarm(capsBackend());
    const root = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1" });
    let parent = root;
    for (let i = 0; i < DEPTH; i++) parent = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j2", dependsOn: { jobs: [parent] } });
    const ranBefore = await farm.t.run(async (ctx) => (await ctx.db.system.query("_scheduled_functions").collect()).length);
    const peaks = recordPeaks();
    atStep("cancel");
    await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: root });
    const left = async () => {
      atStep("seed");
      const settling = await farm.t.run(async (ctx) => (await ctx.db.query("settlements").first()) !== null);
      atStep("cancel");
      return settling;
    };
    while (await left()) {
      vi.advanceTimersByTime(0);
      await farm.t.finishInProgressScheduledFunctions();
    }
    stopRecording();
    atStep("seed");
    const canceled = (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter((j) => j.status === "canceled" && j.errorCode === "dependency_failed").length;
    const runs = (await farm.t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect())).slice(ranBefore).filter((f) => f.state.kind === "success" || f.state.kind === "failed");
    const pages = runs.filter((f) => f.name === "dependencies:settle").length;
    const transactions = 1 + runs.length;
    const MiB = 1024 * 1024;
    const mib = (bytes: number) => Math.round((bytes / MiB) * 1000) / 1000;
    saveFigures("pipelines_cancel", {
      cancel_700_deep_transactions: {
        value: transactions,
        unit: `transactions (the root's cancel and the ${runs.length} functions it set off, ${pages} of them settlement pages; ${canceled} of ${DEPTH} descendants canceled)`,
        target: "≤ 2 per level (1,400), every descendant canceled",
        pass: transactions <= 2 * DEPTH && canceled === DEPTH,
      },
      cancel_700_deep_max_read: { value: mib(peaks.bytesRead.bytes), unit: "MiB read by one transaction", target: "≤ 8", pass: peaks.bytesRead.bytes <= CAPS_TARGETS.bytesRead },
      cancel_700_deep_max_written: { value: mib(peaks.bytesWritten.bytes), unit: "MiB written by one transaction", target: "≤ 4", pass: peaks.bytesWritten.bytes <= CAPS_TARGETS.bytesWritten },
    }, MEASURES);
  } finally {
    stopRecording();
    vi.useRealTimers();
  }
}, 600_000);
