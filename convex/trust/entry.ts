/** What other domains use of trust/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { creditTotalOf, weekCreditDays } from "./credit";
export { sum } from "./creditSums";
export { weeksOf } from "./creditWeeks";
export { denyPendingCredit } from "./instanceCredit";
export { outputPerInstance, validationView } from "./instanceView";
export { completeInstance } from "./instanceJudge";
export { cancelRunningInstances, countable, failInstance, instanceOfLease, instancesOf, releaseInstance, settleReplica, startInstance } from "./instances";
export type { Instance } from "./instances";
export { TRUST, checkValidation, donorKey, maxErrorsOf, mayRun, newRound, validationSpec } from "./validation";
export type { JobValidation } from "./validation";
export { appCacheTtl, appValidation } from "./validationApps";
