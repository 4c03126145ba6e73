/** What other domains use of queue/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { bumpFailed, bumpLane, bumpTypeEnergy, noteMetrics } from "./counters";
export type { FinishedStatus } from "./counters";
export { stopWaiting } from "./demand";
export { recordEvent } from "./events";
export { giveBackWant, inboxRows, isOfferedTo, withdrawOffer } from "./inbox";
export { kickForJobs, kickSummary } from "./kick";
export { laneFor } from "./laneFor";
export { presenceOf } from "./presence";
export { classOf } from "./requirements";
export type { JobRequirements } from "./requirements";
export { routingCapabilities } from "./routing";
export { cancelIfPending } from "./scheduled";
export type { JobSpec } from "./submit";
export { delayForRetry, finishJob, requeue } from "./transitions";
export { addRunning } from "./workerSlots";
