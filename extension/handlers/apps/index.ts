// Farm apps on the worker side: the `apps` handler the engine runs `app.<name>` jobs through, wired to the
// deployment's module route (runner, module cache and source live in the files beside this one).
export { AppsRuntime } from "./appsSetup";
export type { AppsFarmAccess, AppsRuntimeOptions } from "./appsSetup";
export type { AppRunOutcome, AppRunRequest, ModuleSource } from "./appRunner";
export type { AppPin } from "./appPin";
export type { CachedModule, ModuleCacheOptions } from "./moduleCache";
export type { HttpModuleSourceOptions } from "./moduleSource";
