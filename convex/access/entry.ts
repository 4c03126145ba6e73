/** What other domains use of access/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { clientFromKey, effectiveCapabilities, operatorFromKey, workerFromKey } from "./auth";
export { jobIdOfLease, newLeaseId, sha256Hex } from "./keys";
