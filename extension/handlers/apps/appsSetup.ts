import { join } from "node:path";
import type { Handler } from "../../worker/handler";
import type { ProcessPool } from "../processPool";
import { AppRunner } from "./appRunner";
import { appsHandler } from "./appsHandler";
import { ModuleCache } from "./moduleCache";
import { httpModuleSource } from "./moduleSource";
import { siteUrlFor } from "./siteUrl";

export type AppsSetup = {
  /** The deployment URL the worker connects to; the module route is on its HTTP address. */
  deploymentUrl: string;
  /** An explicit HTTP address (`…convex.site`), when it cannot be derived. */
  siteUrl?: string;
  /** The worker's key: the module route serves only workers allowed to run apps. */
  apiKey: string;
  /** This machine's state folder; modules are cached in its `app-modules` folder. */
  stateDir: string;
  cacheBytes?: number;
};

/** The `apps` handler wired to the deployment: modules downloaded with the worker key, cached by sha256. */
export function createAppsHandler(pool: ProcessPool, setup: AppsSetup): Handler {
  const cache = new ModuleCache({ dir: join(setup.stateDir, "app-modules"), maxBytes: setup.cacheBytes });
  const source = httpModuleSource({ siteUrl: siteUrlFor(setup.deploymentUrl, setup.siteUrl), apiKey: setup.apiKey });
  return appsHandler(new AppRunner(pool, cache, source));
}
