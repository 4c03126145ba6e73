/** What other domains use of queue/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export type { JobSpec } from "./submit";
export { delayForRetry, finishJob, requeue } from "./transitions";
