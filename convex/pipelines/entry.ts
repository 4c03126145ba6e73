/** What other domains use of pipelines/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { DEPENDENCY_FAILED, checkDependsOn, checkNoCycle, dependsOnSpec, insertEdges, noteBatchJobAdded, noteBatchJobPurged, noteBatchJobRetried, noteJobEnded, resolveParents, retriedInputsGone, unmetCount } from "./dependencies";
export type { CheckedDependsOn } from "./dependencies";
export { INPUTS_GONE, insertParentRefs } from "./parentRefs";
export { pauseSchedulesOfKey } from "./schedules";
