// Farm apps on the worker side: the runner the engine calls for `app.<name>` jobs, the module cache and source.
export type { AppRunOutcome, AppRunRequest, ModuleSource } from "./appRunner";
export type { AppPin } from "./appPin";
export type { CachedModule, ModuleCacheOptions } from "./moduleCache";
export type { HttpModuleSourceOptions } from "./moduleSource";
