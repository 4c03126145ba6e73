import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const RESULTS_FILE = join(process.cwd(), "bench", "results.json");

export type Figure = { value: number; unit: string; target?: string; pass?: boolean };

/** Merge one benchmark's figures into bench/results.json under its own key and print them. */
export function saveFigures(benchmark: string, figures: Record<string, Figure>): void {
  const all = (existsSync(RESULTS_FILE) ? JSON.parse(readFileSync(RESULTS_FILE, "utf8")) : {}) as Record<string, unknown>;
  all[benchmark] = { measuredAt: new Date().toISOString(), figures };
  writeFileSync(RESULTS_FILE, JSON.stringify(all, null, 2) + "\n");
  for (const [name, f] of Object.entries(figures)) {
    const verdict = f.pass === undefined ? "" : f.pass ? "  PASS" : "  FAIL";
    const target = f.target ? `  (target ${f.target})` : "";
    console.log(`${benchmark} · ${name}: ${f.value} ${f.unit}${target}${verdict}`);
  }
}
