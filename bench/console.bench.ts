import { expect, test, vi } from "vitest";
import { api, internal } from "../convex/_generated/api";
import type { Id } from "../convex/_generated/dataModel";
import { BULK_BATCH } from "../convex/consoleActions";
import { TX_BUDGET } from "../convex/core/budget";
import { copyDeadJobs, deadJob } from "../test/backend/console/helpers";
import { measure, type Usage } from "../test/backend/metrics";
import { seedPending } from "../test/backend/seed";
import { enrollWorker, newFarm, refreshSummaries, type Backend } from "../test/backend/setup";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/console.bench.ts", "convex"];

/**
 * The operator's console at 100,000 jobs: documents each console query reads (convex-test's transaction
 * accounting, limits on), and a bulk retry of 2,000 dead letters stepped batch by batch: how many
 * transactions, and the most documents and bytes one of them read and wrote, against what a batch's jobs should
 * write and the project's transaction budget (per batch, so the same at any size; each step costs convex-test a
 * sort of every table it reads, so 10,000 took six minutes of `npm run bench`).
 */
const BULK_DEAD = 2_000;

const READ_TARGET = 1_000;

test("every console query reads < 1,000 documents at 100,000 jobs", async () => {
  vi.useFakeTimers(); // nothing scheduled runs behind the measurements
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, capabilities: ["cpu"] });
  const firstDead = await deadJob(farm, op, { type: "render", batchId: "nightly" });
  // 300 output chunks on one dead job: its page shows the newest 50, the output query pages 200 at a time
  await farm.t.run(async (ctx) => {
    for (let seq = 0; seq < 300; seq++) await ctx.db.insert("jobOutput", { orgId: farm.orgId, jobId: firstDead, seq, chunk: `line ${seq}\n` });
  });
  await copyDeadJobs(farm, firstDead, 29_999, 4_000);
  await seedPending(farm, 70_000, { requiredCapabilities: ["cpu"] });
  await refreshSummaries(farm.t);
  const apiKey = op.apiKey;
  const page = { numItems: 100, cursor: null };
  const reads: Record<string, Usage> = {
    overview: (await measure(farm.t, "query", api.console.overview, { apiKey })).usage,
    jobs_all: (await measure(farm.t, "query", api.console.jobs, { apiKey, filter: {}, paginationOpts: page })).usage,
    jobs_dead: (await measure(farm.t, "query", api.console.jobs, { apiKey, filter: { status: "dead" }, paginationOpts: page })).usage,
    jobs_status_type: (await measure(farm.t, "query", api.console.jobs, { apiKey, filter: { status: "pending", type: "seed" }, paginationOpts: page })).usage,
    jobs_batch_status_checked: (
      await measure(farm.t, "query", api.console.jobs, { apiKey, filter: { batchId: "nightly", status: "pending" }, paginationOpts: page })
    ).usage,
    jobs_time_range: (
      await measure(farm.t, "query", api.console.jobs, { apiKey, filter: { type: "render", from: 0, to: Date.now() + 1 }, paginationOpts: page })
    ).usage,
    job_page: (await measure(farm.t, "query", api.console.job, { apiKey, jobId: firstDead })).usage,
    job_output_page: (await measure(farm.t, "query", api.console.jobOutput, { apiKey, jobId: firstDead, fromSeq: 0 })).usage,
    workers: (await measure(farm.t, "query", api.console.workers, { apiKey })).usage,
    leaderboard: (await measure(farm.t, "query", api.console.leaderboard, { apiKey, weekOf: Date.now() })).usage,
    access: (await measure(farm.t, "query", api.consoleAccess.list, { apiKey })).usage,
  };
  const overview = await farm.t.query(api.console.overview, { apiKey });
  expect(overview.counts.pending + overview.counts.dead).toBe(100_000);
  vi.useRealTimers();

  const figures: Record<string, Figure> = {};
  for (const [name, usage] of Object.entries(reads)) {
    figures[`reads_${name}_100k_jobs`] = {
      value: usage.documentsRead,
      unit: "documents",
      target: `< ${READ_TARGET}`,
      pass: usage.documentsRead < READ_TARGET,
    };
  }
  saveFigures("console", figures, MEASURES);
});

async function stepBulk(t: Backend, bulkId: Id<"bulkOps">) {
  let transactions = 0;
  const most = { written: 0, read: 0, bytesRead: 0, bytesWritten: 0 };
  for (;;) {
    const { usage } = await measure(t, "mutation", internal.consoleActions.bulkStep, { bulkId });
    transactions++;
    most.written = Math.max(most.written, usage.documentsWritten);
    most.read = Math.max(most.read, usage.documentsRead);
    most.bytesRead = Math.max(most.bytesRead, usage.bytesRead);
    most.bytesWritten = Math.max(most.bytesWritten, usage.bytesWritten);
    const op = await t.run(async (ctx) => await ctx.db.get(bulkId));
    if (op!.done) return { transactions, most, affected: op!.affected };
  }
}

/** A retried job's writes: the job, its lane's and its org's counter changes, its event (queue/deadLetters.ts). */
const WRITES_PER_RETRY = 4;
/** A step's own writes beside its jobs': the operation's row, its next step scheduled, the dispatcher's and summary's kicks (a state row and a scheduled run each). */
const WRITES_PER_STEP = 6;
const MiB = 1024 * 1024;
const mib = (bytes: number) => Math.round((bytes / MiB) * 1000) / 1000;

test(`a bulk retry of ${BULK_DEAD} dead letters writes what its jobs need and stays within the transaction budget`, async () => {
  vi.useFakeTimers(); // the batches are stepped here, one transaction each, with the limits enforced
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const first = await deadJob(farm, op);
  await copyDeadJobs(farm, first, BULK_DEAD - 1, 4_000);
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "retry", filter: { status: "dead" } });
  const retry = await stepBulk(farm.t, bulkId);
  expect(retry.affected).toBe(BULK_DEAD);
  vi.useRealTimers();
  saveFigures("console_bulk", {
    bulk_retry_2k_transactions: {
      value: retry.transactions,
      unit: `transactions (${BULK_BATCH} jobs each)`,
      target: `≈ ${BULK_DEAD} / ${BULK_BATCH} + 1`,
      pass: retry.transactions <= Math.ceil(BULK_DEAD / BULK_BATCH) + 1,
    },
    bulk_retry_2k_max_written: {
      value: retry.most.written,
      unit: "documents written by one transaction",
      target: `≤ ${WRITES_PER_RETRY} per job × ${BULK_BATCH} + ${WRITES_PER_STEP} (${WRITES_PER_RETRY * BULK_BATCH + WRITES_PER_STEP})`,
      pass: retry.most.written <= WRITES_PER_RETRY * BULK_BATCH + WRITES_PER_STEP,
    },
    bulk_retry_2k_max_read: { value: retry.most.read, unit: "documents read by one transaction" },
    bulk_retry_2k_max_bytes_read: {
      value: mib(retry.most.bytesRead),
      unit: "MiB read by one transaction",
      target: `≤ ${mib(TX_BUDGET.readBytes)} (the project's budget, half of Convex's limit)`,
      pass: retry.most.bytesRead <= TX_BUDGET.readBytes,
    },
    bulk_retry_2k_max_bytes_written: {
      value: mib(retry.most.bytesWritten),
      unit: "MiB written by one transaction",
      target: `≤ ${mib(TX_BUDGET.writeBytes)} (the project's budget, half of Convex's limit)`,
      pass: retry.most.bytesWritten <= TX_BUDGET.writeBytes,
    },
  }, MEASURES);
});
