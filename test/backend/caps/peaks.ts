import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { convexTest } from "convex-test";
// convex-test keeps its transaction accounting in this class; its package has no exports map, so the file is
// importable, and it is the same module instance convex-test itself uses.
import { TransactionMetricsTracker } from "convex-test/dist/transactionMetrics.js";
import schema from "../../../convex/schema";
import { modules } from "../setup";

const MiB = 1024 * 1024;

/** The per-transaction targets: half of Convex's 16 MiB read and 8 MiB write limits. */
export const CAPS_TARGETS = { bytesRead: 8 * MiB, bytesWritten: 4 * MiB } as const;

/** A backend whose every transaction fails past the targets (scheduled ones included), not only past Convex's limits. */
export function capsBackend() {
  return convexTest({ schema, modules, transactionLimits: { ...CAPS_TARGETS } });
}

export type Peak = { bytes: number; step: string };
export type Peaks = { bytesRead: Peak; bytesWritten: Peak; transactions: number };

type Layer = { metrics: { bytesRead: number; bytesWritten: number } };
type TrackerInternals = { _layers: Layer[] };

let current: Peaks | null = null;
let step = "setup";

/** Name what the following transactions belong to (the peaks say which step reached them). */
export function atStep(name: string): void {
  step = name;
}

/**
 * From now on, note the bytes read and written by every top-level transaction convex-test runs (a function
 * called by a test, a scheduled function, a t.run) as it ends, committed or rolled back; the largest of each
 * with the step it came from.
 */
export function recordPeaks(): Peaks {
  const peaks: Peaks = { bytesRead: { bytes: 0, step: "" }, bytesWritten: { bytes: 0, step: "" }, transactions: 0 };
  current = peaks;
  return peaks;
}

export function stopRecording(): void {
  current = null;
}

function note(tracker: TrackerInternals): void {
  // seeding and checking (step "seed") is the test's own work, not a function's
  if (!current || tracker._layers.length !== 1 || step === "seed") return;
  const { bytesRead, bytesWritten } = tracker._layers[0].metrics;
  current.transactions++;
  if (bytesRead > current.bytesRead.bytes) current.bytesRead = { bytes: bytesRead, step };
  if (bytesWritten > current.bytesWritten.bytes) current.bytesWritten = { bytes: bytesWritten, step };
}

type Ending = (this: TrackerInternals) => void;
const proto = TransactionMetricsTracker.prototype as unknown as { commit: Ending; rollback: Ending; __peaks?: boolean };
if (!proto.__peaks) {
  proto.__peaks = true;
  const commit = proto.commit;
  const rollback = proto.rollback;
  proto.commit = function (this: TrackerInternals) {
    note(this);
    commit.call(this);
  };
  proto.rollback = function (this: TrackerInternals) {
    note(this);
    rollback.call(this);
  };
}

/**
 * One test per case, on fake timers: each runs with the peaks recorded, says what it read and wrote, and fails
 * when any of its transactions (scheduled ones included) read more than 8 MiB or wrote more than 4 MiB.
 */
export function capsCases(cases: Array<[string, () => Promise<void>]>): void {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    stopRecording();
    vi.useRealTimers();
  });
  test.each(cases)("%s", async (_name, run) => {
    const peaks = recordPeaks();
    await run();
    console.log(`read ${peaks.bytesRead.bytes} B (${peaks.bytesRead.step}); wrote ${peaks.bytesWritten.bytes} B (${peaks.bytesWritten.step})`);
    expect(peaks.transactions).toBeGreaterThan(0);
    expect(peaks.bytesRead.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesRead);
    expect(peaks.bytesWritten.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesWritten);
  }, 180_000);
}
