#!/usr/bin/env node
// `npm test`: every test layer in turn, a timing per layer, and one closing line `N passed, N failed`.
// Layers 1–3 run in vitest (unit, backend, engine); 4 and 5 in code-server (extension host, UI against the .vsix);
// then the fault and load suite (vitest "faults": real CLI workers through kills, drops and a revoked key).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const layers = [
  { name: "unit · backend · engine (vitest)", run: () => vitestProjects(["unit", "backend", "engine"]) },
  { name: "extension host (code-server)", run: () => summarizedScript("test:host") },
  { name: "UI against the packaged .vsix (code-server)", run: () => summarizedScript("test:ui") },
  { name: "fault and load suite (vitest)", run: () => vitestProjects(["faults"]) },
];

let passed = 0;
let failed = 0;
const timings = [];
const failures = [];
for (const layer of layers) {
  const started = Date.now();
  console.log(`\n=== ${layer.name} ===`);
  const result = await layer.run();
  passed += result.passed;
  failed += result.failed;
  failures.push(...(result.failures ?? []).map((f) => `${layer.name}: ${f}`));
  timings.push(`${layer.name}: ${result.passed} passed, ${result.failed} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
// The failures again, just above the totals, so the tail of a long CI log says what broke.
if (failures.length > 0) console.log("\nFailed:\n" + failures.map((f) => `  ✗ ${f}`).join("\n"));
console.log("\n" + timings.join("\n"));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    });
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

async function vitestProjects(projects) {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-vitest-"));
  const report = join(dir, "report.json");
  const { code } = await run("npx", [
    "vitest", "run", ...projects.flatMap((p) => ["--project", p]),
    "--reporter=default", "--reporter=json", `--outputFile.json=${report}`,
  ]);
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    // A file that failed with no failed test of its own (it did not load, or a beforeAll threw and its tests were
    // skipped): count it as one failure so it cannot hide.
    const broken = json.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((t) => t.status === "failed"));
    const failures = [
      ...json.testResults.flatMap((file) =>
        file.assertionResults
          .filter((t) => t.status === "failed")
          .map((t) => `${relative(process.cwd(), file.name)} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`),
      ),
      ...broken.map((file) => `${relative(process.cwd(), file.name)} failed outside its tests (did not load, or a hook threw): ${firstLine(file.message)}`),
    ];
    // vitest exits non-zero with every test passed when an error escaped a test (an unhandled rejection).
    const escaped = code !== 0 && json.numFailedTests === 0 && broken.length === 0;
    if (escaped) failures.push(`vitest exited ${code} with every test passed: an error escaped a test (see "Unhandled Errors" above)`);
    return { passed: json.numPassedTests, failed: json.numFailedTests + broken.length + (escaped ? 1 : 0), failures };
  } catch {
    console.error("vitest wrote no report; counting the layer as one failure");
    return { passed: 0, failed: 1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function firstLine(text) {
  return String(text ?? "").split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 300) ?? "";
}

// Layers 4 and 5 print their own plain `N passed, N failed` line; a run that ends without one failed.
async function summarizedScript(script) {
  const { code, output } = await run("npm", ["run", "--silent", script]);
  const lines = [...output.matchAll(/^(\d+) passed, (\d+) failed$/gm)];
  const last = lines.at(-1);
  if (!last) {
    console.error(`npm run ${script} ended (exit ${code}) without a summary line; counting it as one failure`);
    return { passed: 0, failed: 1 };
  }
  const result = { passed: Number(last[1]), failed: Number(last[2]), failures: mochaFailures(output) };
  if (code !== 0 && result.failed === 0) result.failed = 1;
  return result;
}

// Mocha lists each failure after "N failing" as "  1) suite" followed by the indented test title.
function mochaFailures(output) {
  const failingAt = output.search(/^\s*\d+ failing/m);
  if (failingAt < 0) return [];
  return [...output.slice(failingAt).matchAll(/^\s{2}(\d+\) .+)\n((?:\s{5,}.+\n)*)/gm)].map(
    (m) => [m[1], ...m[2].split("\n").map((l) => l.trim()).filter(Boolean)].join(" ").slice(0, 300),
  );
}
