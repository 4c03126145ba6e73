/** What other domains use of observability/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { foldMetrics, rowsTouched } from "./fold";
export { addHistograms, bucketOf, emptyHistogram, isCurrentLayout } from "./histogram";
export { keyCounts } from "./keySummary";
export { arrivalOf, moveOf, runMsOf, verdictsOf } from "./moves";
export type { JobMove } from "./moves";
export { waitPercentiles } from "./queueWait";
export { addRun, p95RunMs } from "./runTimes";
export { checkTraceparent } from "./traceparent";
export { workerStates } from "./workerStates";
export type { SlotStates } from "./workerStates";
