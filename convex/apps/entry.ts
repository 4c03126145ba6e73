/** What other domains use of apps/: its only surface besides core/ (test/unit/architecture/domains.test.ts). */
export { appNameOf, moduleGoneError, pinApp, withAppMemory, withAppsCapability } from "./appJobs";
export type { AppPin } from "./appJobs";
export { findVersion } from "./apps";
