import { describe, expect, it } from "vitest";
import { renderReport } from "../../../bench/report";

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
