import { HandlerRegistry } from "./registry";
import { isolatedHandler } from "./isolated";
import { ollamaCapabilities, probeOllama } from "./ollama";
import { ProcessPool, type ProcessPoolOptions } from "./processPool";
import { recipeType } from "./recipes";
import { DEFAULT_OLLAMA_URL } from "./impl/ollama";
import type { Recipe } from "./impl/recipe";

export { HandlerRegistry } from "./registry";
export { ProcessPool } from "./processPool";
export type { PoolRunContext, ProcessPoolOptions } from "./processPool";
export { AppRunner, ModuleCache, httpModuleSource } from "./apps";
export type { AppPin, AppRunOutcome, AppRunRequest, ModuleSource } from "./apps";
export { isolatedHandler } from "./isolated";
export type { IsolatedHandlerSpec } from "./isolated";
export { probeOllama, ollamaCapabilities } from "./ollama";
export { parseRecipes, loadRecipesFile, recipeType } from "./recipes";
export type { Recipe } from "./impl/recipe";
export type { ImplSpec } from "./protocol";
export { DEFAULT_OLLAMA_URL } from "./impl/ollama";

export type BuiltinOptions = {
  pool?: ProcessPoolOptions;
  /** Offer ollama.generate / ollama.chat (only advertised while Ollama answers). Default true. */
  ollama?: boolean | { url?: string };
  recipes?: Recipe[];
};

/** A registry with the built-in handlers (demo, Ollama, the owner's recipes), all running in child processes. */
export function createBuiltinRegistry(options: BuiltinOptions = {}): { registry: HandlerRegistry; pool: ProcessPool } {
  const pool = new ProcessPool(options.pool);
  const registry = new HandlerRegistry();
  registry.register(isolatedHandler(pool, { type: "demo.echo", impl: { builtin: "demo.echo" } }));
  registry.register(isolatedHandler(pool, { type: "demo.primes", impl: { builtin: "demo.primes" } }));
  if (options.ollama !== false) {
    const url = (typeof options.ollama === "object" && options.ollama.url) || DEFAULT_OLLAMA_URL;
    // Not advertised at all while Ollama is not running, so no Ollama job lands here to fail.
    const caps = (type: string) => async () => {
      const p = await probeOllama(url);
      return p.running ? [type, ...ollamaCapabilities(p.models)] : [];
    };
    for (const type of ["ollama.generate", "ollama.chat"]) {
      registry.register(isolatedHandler(pool, { type, impl: { builtin: type, options: { url } }, capabilities: caps(type) }));
    }
  }
  for (const recipe of options.recipes ?? []) {
    const type = recipeType(recipe.name);
    registry.register(isolatedHandler(pool, { type, impl: { builtin: "recipe", options: recipe }, timeoutMs: recipe.timeoutMs }));
  }
  return { registry, pool };
}
