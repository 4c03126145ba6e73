// What the backend and its clients (the extension's engine, handlers, CLI, session and views) must agree on:
// limits, timings, name patterns, routing, backoff and app limits. Clients import this module and the generated
// `api`, never convex/<domain>/* directly, so the backend's internals can move without reaching into the extension.
// It exports no Convex functions.
export { APP_LIMITS, APP_TYPE_PREFIX, APPS_CAPABILITY, SHA256_HEX } from "./core/appLimits";
export { jitteredBackoffMs } from "./core/backoff";
export { LIMITS, TIMING } from "./core/limits";
export { FAIR } from "./queue/fairLimits";
export { canRunAll, capabilitiesNobodyOffers, typeCapability } from "./lanes/routing";
export { CAPABILITY_PATTERN, isCapabilityGrant, valueBytes } from "./core/validate";
export { prepareAppModule, WasmModuleError } from "./apps/appsWasm";
export { laneLabel } from "./queue/laneLabel";
