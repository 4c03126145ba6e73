import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The first test layer runs both linters over the whole repository (as `npm run lint` does) and fails listing
// every finding: ESLint with typescript-eslint's type-checked recommended rules, and knip (unused files, exports
// and dependencies). Both read their configuration from the repository (eslint.config.mjs, knip.jsonc).
const root = join(__dirname, "..", "..", "..");
const bin = (path: string) => join(root, "node_modules", path);

function run(script: string, args: string[]) {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

describe("lint", () => {
  it("ESLint finds nothing", () => {
    const result = run(bin("eslint/bin/eslint.js"), [".", "--format", "json"]);
    const files = JSON.parse(result.stdout || "[]") as Array<{ filePath: string; messages: Array<{ line: number; ruleId: string | null; message: string }> }>;
    const findings = files.flatMap((f) => f.messages.map((m) => `${f.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId ?? ""} ${m.message}`));
    expect(findings, result.stderr).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  }, 240_000);

  it("knip finds no unused file, export or dependency", () => {
    const result = run(bin("knip/bin/knip.js"), ["--no-config-hints", "--no-progress"]);
    const findings = result.stdout.split("\n").filter((line) => line.trim() !== "");
    expect(findings, result.stderr).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  }, 240_000);
});
