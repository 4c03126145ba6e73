// Farm apps on the worker side: the runner the engine calls for `app.<name>` jobs, the module cache and source.
export { AppRunner } from "./appRunner";
export type { AppRunOutcome, AppRunRequest, ModuleSource } from "./appRunner";
export type { AppPin } from "./appPin";
export { ModuleCache } from "./moduleCache";
export type { CachedModule, ModuleCacheOptions } from "./moduleCache";
export { httpModuleSource } from "./moduleSource";
export { appsHandler } from "./appsHandler";
export { createAppsHandler } from "./appsSetup";
export type { AppsSetup } from "./appsSetup";
export { siteUrlFor } from "./siteUrl";
export type { HttpModuleSourceOptions } from "./moduleSource";
export { capMemory, pagesForMegabytes, WasmModuleError } from "./wasmMemory";
