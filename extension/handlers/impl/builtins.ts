import type { Impl } from "../protocol";
import { echo } from "./echo";
import { ollamaChat, ollamaGenerate } from "./ollama";
import { primes } from "./primes";
import { runRecipe } from "./recipe";

/** The job code bundled into the runner, by name. */
export const BUILTIN_IMPLS: Record<string, Impl> = {
  "demo.echo": echo,
  "demo.primes": primes,
  "ollama.generate": ollamaGenerate,
  "ollama.chat": ollamaChat,
  recipe: runRecipe,
};
