// bench/REPORT.md is not stale: every benchmark's entry in bench/results.json fingerprints the code it measures
// (bench/sources.ts), and the report is what bench/report.ts renders from results.json. A change to a measured
// path without re-running its benchmark fails here, naming the benchmark and the paths (run `npm run bench`, or
// the one benchmark: `npx vitest run --project bench bench/<file>` then `npm run bench:report`).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderReport } from "../../../bench/report";
import type { BenchEntry } from "../../../bench/results";
import { changedPaths, filesUnder, fingerprint, hashPath } from "../../../bench/sources";

const root = join(__dirname, "..", "..", "..");
const results = JSON.parse(readFileSync(join(root, "bench", "results.json"), "utf8")) as Record<string, BenchEntry>;

/** One line per benchmark whose figures no longer describe the code: what changed, or why it cannot tell. */
function staleBenchmarks(all: Record<string, BenchEntry>, at: string): string[] {
  const stale: string[] = [];
  for (const [benchmark, entry] of Object.entries(all).sort(([a], [b]) => a.localeCompare(b))) {
    if (entry.frozen) continue;
    if (!entry.measures || Object.keys(entry.measures).length === 0) {
      stale.push(`${benchmark}: records no measured paths (re-run it)`);
      continue;
    }
    const changed = changedPaths(entry.measures, at);
    if (changed.length > 0) stale.push(`${benchmark}: ${changed.join(", ")} changed since it was measured (${entry.measuredAt ?? "?"})`);
  }
  return stale;
}

describe("bench/REPORT.md is fresh", () => {
  it("no measured path changed since its benchmark ran", () => {
    expect(staleBenchmarks(results, root)).toEqual([]);
  });

  it("the report is what bench/report.ts renders from results.json", () => {
    expect(readFileSync(join(root, "bench", "REPORT.md"), "utf8")).toBe(renderReport(results));
  });

  it("a frozen entry says why it is kept", () => {
    for (const entry of Object.values(results)) if (entry.frozen !== undefined) expect(entry.frozen.length).toBeGreaterThan(10);
  });
});

describe("measured-path fingerprints", () => {
  const repo = () => {
    const dir = mkdtempSync(join(tmpdir(), "farmhand-fresh-"));
    mkdirSync(join(dir, "convex", "lib"), { recursive: true });
    mkdirSync(join(dir, "convex", "node_modules"), { recursive: true });
    writeFileSync(join(dir, "convex", "lib", "claim.ts"), "export const a = 1;\n");
    writeFileSync(join(dir, "convex", "node_modules", "dep.js"), "x");
    writeFileSync(join(dir, "bench.ts"), "it()\n");
    return dir;
  };

  it("names the benchmark and the path when a file under a measured folder changes, is added or is removed", () => {
    const dir = repo();
    try {
      const entry: BenchEntry = { measuredAt: "then", measures: fingerprint(["convex", "bench.ts"], dir), figures: {} };
      expect(staleBenchmarks({ claim: entry }, dir)).toEqual([]);
      writeFileSync(join(dir, "convex", "lib", "claim.ts"), "export const a = 2;\n");
      expect(staleBenchmarks({ claim: entry }, dir)).toEqual(["claim: convex changed since it was measured (then)"]);
      writeFileSync(join(dir, "convex", "lib", "claim.ts"), "export const a = 1;\n");
      writeFileSync(join(dir, "convex", "lib", "new.ts"), "");
      expect(changedPaths(entry.measures!, dir)).toEqual(["convex"]);
      rmSync(join(dir, "convex", "lib", "new.ts"));
      rmSync(join(dir, "bench.ts"));
      expect(changedPaths(entry.measures!, dir)).toEqual(["bench.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ignores installed dependencies, and a renamed file counts as a change", () => {
    const dir = repo();
    try {
      const before = hashPath("convex", dir);
      writeFileSync(join(dir, "convex", "node_modules", "dep.js"), "y");
      expect(hashPath("convex", dir)).toBe(before);
      rmSync(join(dir, "convex", "lib", "claim.ts"));
      writeFileSync(join(dir, "convex", "lib", "claims.ts"), "export const a = 1;\n");
      expect(hashPath("convex", dir)).not.toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without git, .gitignore is read by hand: ignored folders, names and globs do not count", () => {
    const dir = repo();
    try {
      writeFileSync(join(dir, ".gitignore"), "# build output\nconvex/build/\n*.tmp\n.state/\n!keep.tmp\n");
      const before = hashPath("convex", dir);
      mkdirSync(join(dir, "convex", "build"), { recursive: true });
      mkdirSync(join(dir, "convex", "lib", ".state"), { recursive: true });
      writeFileSync(join(dir, "convex", "build", "app.wasm"), "x");
      writeFileSync(join(dir, "convex", "lib", "run.tmp"), "x");
      writeFileSync(join(dir, "convex", "lib", ".state", "session.json"), "{}");
      expect(hashPath("convex", dir)).toBe(before);
      writeFileSync(join(dir, "convex", "lib", "built.ts"), "x");
      expect(hashPath("convex", dir)).not.toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // CI may run in a checkout git refuses to read (owned by another user): the hand-read .gitignore must then list
  // exactly the files git lists here, or every fingerprint would read as changed.
  it("reading .gitignore by hand lists the same files as git for every measured path", () => {
    const measured = [...new Set(Object.values(results).flatMap((entry) => Object.keys(entry.measures ?? {})))];
    expect(measured.length).toBeGreaterThan(0);
    for (const path of measured) expect({ path, files: filesUnder(root, path, { git: false }).sort() }).toEqual({ path, files: filesUnder(root, path).sort() });
  });

  it("an entry without fingerprints is stale, a frozen one is not", () => {
    expect(staleBenchmarks({ old: { figures: {} }, kept: { frozen: "measured before X, for comparison", figures: {} } }, root)).toEqual([
      "old: records no measured paths (re-run it)",
    ]);
  });
});
