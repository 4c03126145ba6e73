// What the backend and its clients (the extension's engine, handlers, CLI, session and views) must agree on:
// limits, timings, name patterns, routing, backoff and app limits. Clients import this module and the generated
// `api`, never convex/lib/* directly, so the backend's internals can move without reaching into the extension.
// It exports no Convex functions.
export { APP_LIMITS, APP_TYPE_PREFIX, APPS_CAPABILITY, SHA256_HEX } from "./lib/appLimits";
export { jitteredBackoffMs } from "./lib/backoff";
export { LIMITS, TIMING } from "./lib/limits";
export { FAIR } from "./lib/fairLimits";
export { canRunAll, capabilitiesNobodyOffers, typeCapability } from "./lib/routing";
export { CAPABILITY_PATTERN, isCapabilityGrant, jsonBytes } from "./lib/validate";
export { prepareAppModule, WasmModuleError } from "./lib/appsWasm";
export { laneLabel } from "./lib/laneLabel";
