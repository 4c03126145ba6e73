import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { failingFigures, renderReport } from "../../../bench/report";

describe("benchmark report", () => {
  const results = {
    zeta: { measuredAt: "2026-11-22T00:00:00.000Z", figures: { idle_calls: { value: 0, unit: "calls/min", target: "0", pass: true } } },
    alpha: {
      measuredAt: "2026-11-21T00:00:00.000Z",
      figures: {
        claim_reads: { value: 10, unit: "documents", target: "< 100", pass: true },
        overlap: { value: 28, unit: "pairs | of 28", target: "< 28", pass: false },
        latency: { value: 9.9, unit: "ms" },
      },
    },
  };

  it("counts figures, targets and failures in its summary line", () => {
    expect(renderReport(results)).toContain("4 figures from 2 benchmarks; 3 have a target: 2 pass, 1 fail.");
  });

  it("lists benchmarks alphabetically, marks failures, and escapes table pipes", () => {
    const rows = renderReport(results).split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Benchmark"));
    expect(rows).toEqual([
      "| alpha | claim_reads | 10 | documents | < 100 | PASS |",
      "| alpha | overlap | 28 | pairs \\| of 28 | < 28 | **FAIL** |",
      "| alpha | latency | 9.9 | ms | — | — |",
      "| zeta | idle_calls | 0 | calls/min | 0 | PASS |",
    ]);
  });

  it("is deterministic for the same results", () => {
    expect(renderReport(results)).toBe(renderReport(JSON.parse(JSON.stringify(results)) as typeof results));
  });
});

describe("a figure that misses its target fails `npm run bench`", () => {
  const passing = { bundle: { measuredAt: "2026-11-22T00:00:00.000Z", figures: { size: { value: 197.1, unit: "KB", target: "< 250", pass: true }, info: { value: 3, unit: "files" } } } };
  const failing = {
    ...passing,
    claim: {
      measuredAt: "2026-11-22T00:00:00.000Z",
      figures: { claim_reads: { value: 120, unit: "documents", target: "< 100", pass: false }, unjudged: { value: 7, unit: "ms", target: "< 5" } },
    },
  };

  it("names each failing figure with its value and target; a target never judged counts as failing", () => {
    expect(failingFigures(passing)).toEqual([]);
    expect(failingFigures(failing)).toEqual(["claim · claim_reads: 120 documents (target < 100)", "claim · unjudged: 7 ms (target < 5 never judged)"]);
  });

  /** `npm run bench`'s own command line, with the benchmarks themselves replaced by `true` or `false` (they passed or not). */
  function runBenchScript(results: unknown, benchmarksExit: 0 | 1) {
    const root = join(__dirname, "..", "..", "..");
    const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.bench;
    expect(script).toContain("vitest run --project bench");
    const dir = mkdtempSync(join(tmpdir(), "farmhand-bench-"));
    try {
      mkdirSync(join(dir, "bench"));
      writeFileSync(join(dir, "bench", "results.json"), JSON.stringify(results));
      const command = script.replace("vitest run --project bench", benchmarksExit === 0 ? "true" : "false").replace("tsx bench/report.ts", `tsx ${join(root, "bench", "report.ts")}`);
      const run = spawnSync("sh", ["-c", command], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` },
      });
      return { status: run.status, stderr: run.stderr, report: readFileSync(join(dir, "bench", "REPORT.md"), "utf8") };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("exits non-zero naming the failing figures, after writing the report; zero when every target is met", { timeout: 60_000 }, () => {
    const bad = runBenchScript(failing, 0);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("2 benchmark figures missed the target:\n  claim · claim_reads: 120 documents (target < 100)\n  claim · unjudged: 7 ms (target < 5 never judged)");
    expect(bad.report).toContain("| claim | claim_reads | 120 | documents | < 100 | **FAIL** |");
    const good = runBenchScript(passing, 0);
    expect(good.status).toBe(0);
    expect(good.stderr).not.toContain("missed the target");
    // failing benchmarks still fail the run when every saved figure meets its target
    expect(runBenchScript(passing, 1).status).toBe(1);
  });
});
