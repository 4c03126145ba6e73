/** What other domains use of lanes/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { bumpFailed, bumpFinished, bumpLane, bumpTypeEnergy, laneTotals, noteMetrics, orgTotals, recentThroughput } from "./counters";
export type { ClaimNote, FinishedStatus } from "./counters";
export { setWants, stopWaiting, waiterOf } from "./demand";
export { recordEvent } from "./events";
export type { EventKind } from "./events";
export { clearResync, giveBackWant, inboxRows, isOfferedTo, leaveRunning, noticeCancel, offerJob, takeOffer, withdrawOffer } from "./inbox";
export { KEY_FOLD_AGE_MS, KEY_FOLD_BATCH, addKeyRunning, exactRunning, foldKeyEnds, keyRunningRow } from "./keyRunning";
export { kickForJobs, kickForWaiter, kickSummary, noteWaiter } from "./kick";
export { laneFor } from "./laneFor";
export { canServe, eligibleLanes, orgLanes } from "./lanes";
export { presenceOf, touchWorker } from "./presence";
export { checkRequirements, classOf, jobRequirements, meetsClass } from "./requirements";
export type { JobRequirements } from "./requirements";
export { routingCapabilities } from "./routing";
export { cancelIfPending } from "./scheduled";
export { addRunning, noteSlotState, runningCount } from "./workerSlots";
