import type { Handler } from "../worker/handler";
import { HandlerRegistry } from "./registry";
import { isolatedHandler } from "./isolated";
import { withInputs } from "./withInputs";
import { ollamaCapabilities, probeOllama } from "./ollama";
import { ProcessPool, type ProcessPoolOptions } from "./processPool";
import { recipeType } from "./recipes";
import { DEFAULT_OLLAMA_URL, offersModel } from "./impl/ollama";
import type { Recipe } from "./impl/recipe";

export { HandlerRegistry } from "./registry";
export { ProcessPool } from "./processPool";
export type { PoolRunContext, ProcessPoolOptions } from "./processPool";
export { AppsRuntime } from "./apps";
export type { AppPin, AppRunOutcome, AppRunRequest, AppsFarmAccess, AppsRuntimeOptions, ModuleSource } from "./apps";
export { isolatedHandler } from "./isolated";
export { probeOllama } from "./ollama";
export { parseRecipes, loadRecipesFile } from "./recipes";
export type { Recipe } from "./impl/recipe";

/**
 * Which local Ollama models to offer: `url` of the local server; `models` the names the donor chose (only these are
 * advertised and run); without `models`, every local model (the CLI's default; the extension always asks).
 */
export type OllamaOffer = { url?: string; models?: readonly string[] };

export type BuiltinOptions = {
  pool?: ProcessPoolOptions;
  /** Offer ollama.generate / ollama.chat (only advertised while Ollama answers). Default true, every model. */
  ollama?: boolean | OllamaOffer;
  recipes?: Recipe[];
};

/** A registry with the built-in handlers (demo, Ollama, the owner's recipes), all running in child processes. */
export function createBuiltinRegistry(options: BuiltinOptions = {}): { registry: HandlerRegistry; pool: ProcessPool } {
  const pool = new ProcessPool(options.pool);
  const registry = new HandlerRegistry();
  const ollama = options.ollama === false ? [] : ollamaHandlers(pool, options.ollama === true || options.ollama === undefined ? {} : options.ollama);
  for (const handler of [...demoHandlers(pool), ...ollama, ...recipeHandlers(pool, options.recipes ?? [])]) registry.register(handler);
  return { registry, pool };
}

export function demoHandlers(pool: ProcessPool): Handler[] {
  const plain = ["demo.echo", "demo.primes", "demo.slow"].map((type) => isolatedHandler(pool, { type, impl: { builtin: type } }));
  // demo.sum reduces its parents' results: the host reads them and hands them to the job code whole
  return [...plain, withInputs(isolatedHandler(pool, { type: "demo.sum", impl: { builtin: "demo.sum" } }))];
}

/** ollama.generate and ollama.chat, advertised with their models while Ollama runs; nothing when no model is chosen. */
export function ollamaHandlers(pool: ProcessPool, offer: OllamaOffer): Handler[] {
  const url = offer.url || DEFAULT_OLLAMA_URL;
  const chosen = offer.models?.map((m) => m.toLowerCase());
  if (chosen?.length === 0) return [];
  // Not advertised at all while Ollama is not running, so no Ollama job lands here to fail.
  const capabilities = (type: string) => async () => {
    const p = await probeOllama(url);
    if (!p.running) return [];
    const models = chosen ? p.models.filter((m) => offersModel(chosen, m)) : p.models;
    return models.length > 0 ? [type, ...ollamaCapabilities(models)] : [];
  };
  const options = { url, ...(chosen ? { models: chosen } : {}) };
  return ["ollama.generate", "ollama.chat"].map((type) => isolatedHandler(pool, { type, impl: { builtin: type, options }, capabilities: capabilities(type), freezable: false }));
}

export function recipeHandlers(pool: ProcessPool, recipes: readonly Recipe[]): Handler[] {
  return recipes.map((recipe) =>
    isolatedHandler(pool, { type: recipeType(recipe.name), impl: { builtin: "recipe", options: recipe }, timeoutMs: recipe.timeoutMs }),
  );
}

