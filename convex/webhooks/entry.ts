/** What other domains use of webhooks/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { deliveryOf, noteJobEnded } from "./webhooks";
