import type { Impl } from "../protocol";
import { runApp } from "../apps/runApp";
import { echo } from "./echo";
import { ollamaChat, ollamaGenerate } from "./ollama";
import { primes } from "./primes";
import { runRecipe } from "./recipe";
import { slow } from "./slow";
import { sum } from "./sum";

/** The job code bundled into the runner, by name. */
export const BUILTIN_IMPLS: Record<string, Impl> = {
  "demo.echo": echo,
  "demo.primes": primes,
  "demo.slow": slow,
  "demo.sum": sum,
  "ollama.generate": ollamaGenerate,
  "ollama.chat": ollamaChat,
  recipe: runRecipe,
  app: runApp,
};

/** Built-ins whose work happens in another program (the Ollama server): the runner reports no CPU time for them. */
export const CPU_MEASURED_ELSEWHERE = new Set(["ollama.generate", "ollama.chat"]);
/** Built-ins that spawn processes: their CPU time counts only where the runner can measure its children (Linux). */
export const SPAWNS_PROCESSES = new Set(["recipe"]);
