import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { LIMITS } from "../convex/core/limits";
import { fiveHundredJobBatches, hundredDeadLetters, oneJobAtEveryCap, twoHundredLanes } from "../test/backend/caps/functions";
import { bulkRetryOfBigDeadLetters, claimHeadsOfBigLanes, consolePageOfBigJobs, dispatcherOverBigLanes, retentionOverBigOutput } from "../test/backend/caps/issue";
import { CAPS_TARGETS, recordPeaks, stopRecording, type Peak } from "../test/backend/caps/peaks";
import { bytesPerWrite, PER_WRITE_TARGET_BYTES } from "../test/backend/caps/perWrite";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/caps.bench.ts", "convex", "test/backend/caps"];

/**
 * At the caps: the largest bytes any one transaction read and wrote over the backend "at the caps" suite
 * (test/backend/caps/: 256 KiB payloads and results, 512 KiB checkpoints, 10,000 output chunks of 8 KiB,
 * 200 lanes, 500-job batches, 100 dead letters, issue 18's reproductions), measured by convex-test's
 * transaction accounting; and the bytes written per offer, lease, heartbeat and progress report.
 */

beforeAll(() => {
  vi.useFakeTimers();
});
afterAll(() => {
  stopRecording();
  vi.useRealTimers();
});

const SCENARIOS = [
  dispatcherOverBigLanes,
  claimHeadsOfBigLanes,
  consolePageOfBigJobs,
  bulkRetryOfBigDeadLetters,
  retentionOverBigOutput,
  oneJobAtEveryCap,
  twoHundredLanes,
  hundredDeadLetters,
  fiveHundredJobBatches,
];

const MiB = 1024 * 1024;
const mib = (bytes: number) => Math.round((bytes / MiB) * 100) / 100;

test("no transaction reads more than 8 MiB or writes more than 4 MiB at the caps; hot writes stay under 4 KiB", async () => {
  let read: Peak = { bytes: 0, step: "" };
  let written: Peak = { bytes: 0, step: "" };
  let transactions = 0;
  for (const scenario of SCENARIOS) {
    const peaks = recordPeaks();
    await scenario();
    stopRecording();
    transactions += peaks.transactions;
    if (peaks.bytesRead.bytes > read.bytes) read = peaks.bytesRead;
    if (peaks.bytesWritten.bytes > written.bytes) written = peaks.bytesWritten;
  }
  const big = await bytesPerWrite(LIMITS.payloadBytes);
  const small = await bytesPerWrite(16);
  const figures: Record<string, Figure> = {
    largest_bytes_read_by_one_transaction: {
      value: mib(read.bytes),
      unit: `MiB (${read.step}; ${transactions} transactions)`,
      target: "≤ 8 MiB",
      pass: read.bytes <= CAPS_TARGETS.bytesRead,
    },
    largest_bytes_written_by_one_transaction: {
      value: mib(written.bytes),
      unit: `MiB (${written.step})`,
      target: "≤ 4 MiB",
      pass: written.bytes <= CAPS_TARGETS.bytesWritten,
    },
  };
  for (const [name, bytes] of Object.entries(big)) {
    const worst = Math.max(bytes, small[name as keyof typeof small]);
    figures[`bytes_written_per_${name}`] = {
      value: worst,
      unit: `bytes (256 KiB payload ${bytes}, 16 B payload ${small[name as keyof typeof small]})`,
      target: "< 4 KiB whatever the payload",
      pass: worst < PER_WRITE_TARGET_BYTES,
    };
  }
  saveFigures("caps", figures, MEASURES);
  for (const figure of Object.values(figures)) expect(figure.pass).toBe(true);
});
