#!/usr/bin/env node
// `npm run test:ui`: the UI tests in this folder (mocha, in Node) against the packaged .vsix in code-server.
// Prints mocha's report and one closing line `N passed, N failed`; exits non-zero on any failure.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Mocha from "mocha";

const here = dirname(fileURLToPath(import.meta.url));
const mocha = new Mocha({ ui: "bdd", reporter: "spec", timeout: 60_000 });
for (const file of readdirSync(here).filter((name) => name.endsWith(".test.mjs")).sort()) mocha.addFile(join(here, file));

let passed = 0;
let failed = 0;
try {
  await mocha.loadFilesAsync();
  await new Promise((resolve) => {
    const runner = mocha.run(resolve);
    runner.on("pass", () => passed++);
    runner.on("fail", () => failed++);
  });
} catch (error) {
  console.error(`UI tests could not run: ${error instanceof Error ? error.stack : error}`);
  failed++;
}
if (passed + failed === 0) {
  console.error("UI tests: no test ran");
  failed = 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
