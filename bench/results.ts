import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fingerprint, type Measured } from "./sources";

const RESULTS_FILE = join(process.cwd(), "bench", "results.json");

export type Figure = { value: number; unit: string; target?: string; pass?: boolean };

/**
 * One benchmark's entry: `measures` fingerprints the paths (files or folders, from the repository root) whose
 * code the figures measure, the benchmark's own file included (bench/sources.ts); `frozen` marks a reference
 * entry kept on purpose from an earlier commit (it says why), which no benchmark re-measures.
 */
export type BenchEntry = { measuredAt?: string; measures?: Measured; frozen?: string; figures: Record<string, Figure> };

/** Merge one benchmark's figures into bench/results.json under its own key and print them. */
export function saveFigures(benchmark: string, figures: Record<string, Figure>, measures: readonly string[]): void {
  const all = (existsSync(RESULTS_FILE) ? JSON.parse(readFileSync(RESULTS_FILE, "utf8")) : {}) as Record<string, BenchEntry>;
  all[benchmark] = { measuredAt: new Date().toISOString(), measures: fingerprint(measures), figures };
  writeFileSync(RESULTS_FILE, JSON.stringify(all, null, 2) + "\n");
  for (const [name, f] of Object.entries(figures)) {
    const verdict = f.pass === undefined ? "" : f.pass ? "  PASS" : "  FAIL";
    const target = f.target ? `  (target ${f.target})` : "";
    console.log(`${benchmark} · ${name}: ${f.value} ${f.unit}${target}${verdict}`);
  }
}
