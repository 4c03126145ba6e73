import { join } from "node:path";
import type { Handler } from "../../worker/handler";
import type { ProcessPool } from "../processPool";
import { AppRunner, type ModuleSource } from "./appRunner";
import { appsHandler } from "./appsHandler";
import { ModuleCache } from "./moduleCache";
import { httpModuleSource } from "./moduleSource";
import { siteUrlFor } from "./siteUrl";

export type AppsRuntimeOptions = {
  /** This machine's state folder; modules are cached in its `app-modules` folder. */
  stateDir: string;
  cacheBytes?: number;
};

/** The farm the apps handler downloads modules from. */
export type AppsFarmAccess = {
  /** The deployment URL the worker connects to; the module route is on its HTTP address. */
  deploymentUrl: string;
  /** An explicit HTTP address (`…convex.site`), when it cannot be derived. */
  siteUrl?: string;
  /** The worker's key: the module route serves only workers allowed to run apps. */
  apiKey: string;
  fetch?: typeof fetch;
  /** Hears the size of each module downloaded (a metered connection's allowance counts it). */
  onDownloaded?: (bytes: number) => void;
};

/**
 * What a worker needs to run apps for as long as it lives: the process pool and ONE module cache. The handler
 * itself is rebuilt whenever the farm or the donor's settings change (`handlerFor`), but the cache is not, so
 * a download in flight, the modules that running jobs hold (never evicted) and the files already checked
 * against their sha256 carry over a settings reload.
 */
export class AppsRuntime {
  private readonly cache: ModuleCache;

  constructor(
    private readonly pool: ProcessPool,
    options: AppsRuntimeOptions,
  ) {
    this.cache = new ModuleCache({ dir: join(options.stateDir, "app-modules"), maxBytes: options.cacheBytes });
  }

  /** The `apps` handler for this farm: modules downloaded with the worker key, cached by sha256. */
  handlerFor(farm: AppsFarmAccess): Handler {
    const download = httpModuleSource({ siteUrl: siteUrlFor(farm.deploymentUrl, farm.siteUrl), apiKey: farm.apiKey, fetch: farm.fetch });
    const source: ModuleSource = async (app) => {
      const bytes = await download(app);
      farm.onDownloaded?.(bytes.length);
      return bytes;
    };
    return appsHandler(new AppRunner(this.pool, this.cache, source));
  }
}
