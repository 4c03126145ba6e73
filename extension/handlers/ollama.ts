import { CAPABILITY_PATTERN } from "../../convex/contract";
import { DEFAULT_OLLAMA_URL } from "./impl/ollama";

export type OllamaProbe = { running: true; models: string[] } | { running: false; error: string };

/** Ask the local Ollama which models it has (GET /api/tags). Never throws. */
export async function probeOllama(url = DEFAULT_OLLAMA_URL, timeoutMs = 2_000): Promise<OllamaProbe> {
  try {
    const res = await fetch(new URL("/api/tags", url), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return { running: false, error: `Ollama at ${url} answered ${res.status} to /api/tags` };
    const body = (await res.json()) as { models?: Array<{ name?: unknown; model?: unknown }> };
    const names = (body.models ?? [])
      .map((m) => (typeof m.name === "string" ? m.name : typeof m.model === "string" ? m.model : ""))
      .filter(Boolean);
    return { running: true, models: names };
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    return { running: false, error: `Ollama is not running at ${url} (${cause ?? (e as Error).message})` };
  }
}

/**
 * `ollama:<model>` for each model, plus the short name for `:latest` tags (`llama3:latest` → `ollama:llama3`),
 * lowercased; names the server cannot take as a capability (too long, odd characters) are left out.
 */
export function ollamaCapabilities(models: string[]): string[] {
  const caps = new Set<string>();
  for (const raw of models) {
    const name = raw.toLowerCase();
    caps.add(`ollama:${name}`);
    if (name.endsWith(":latest")) caps.add(`ollama:${name.slice(0, -":latest".length)}`);
  }
  return [...caps].filter((c) => CAPABILITY_PATTERN.test(c)).sort();
}
