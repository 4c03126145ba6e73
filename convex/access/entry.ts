/** What other domains use of access/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export type { Minter } from "./access";
export { clientFromKey, effectiveCapabilities, operatorFromKey, workerFromKey } from "./auth";
export { madeBy } from "./keyCreators";
export { jobIdOfLease, newLeaseId, sha256Hex } from "./keys";
