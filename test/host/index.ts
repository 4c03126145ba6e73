// Entry point the extension host loads (payload `extensionTestsPath`): runs every bundled `*.test.js` beside this
// file with mocha's spec reporter, then logs one machine-readable result line for the runner to count.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format } from "node:util";
import Mocha from "mocha";
import { REPORTER_PREFIX, RESULT_PREFIX, type HostSuiteResult, type HostTestResult } from "./result";

export async function run(): Promise<void> {
  process.setSourceMapsEnabled(true);
  // code-server forwards console lines mixed with the workbench's own log: there, mark the reporter's lines as ours.
  const tagLogs = process.env.FARMHAND_HOST_TAG_LOGS === "1";
  if (tagLogs) Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(REPORTER_PREFIX + format(...args));
  // FARMHAND_HOST_GREP: run only the tests whose full title matches (while working on one part).
  const grep = process.env.FARMHAND_HOST_GREP;
  const mocha = new Mocha({ ui: "bdd", reporter: "spec", color: false, timeout: 20_000, ...(grep ? { grep } : {}) });
  const files = readdirSync(__dirname).filter((name) => name.endsWith(".test.js")).sort();
  if (files.length === 0) throw new Error(`no *.test.js files next to ${__filename}`);
  for (const file of files) mocha.addFile(join(__dirname, file));

  const tests: HostTestResult[] = [];
  const failures = await new Promise<number>((resolve) => {
    const runner = mocha.run(resolve);
    runner.on("pass", (test) => tests.push({ title: test.fullTitle(), passed: true, ms: test.duration ?? 0 }));
    runner.on("fail", (test, error: unknown) =>
      tests.push({ title: test.fullTitle(), passed: false, ms: test.duration ?? 0, error: describe(error) }),
    );
  });

  const result: HostSuiteResult = {
    passed: tests.filter((t) => t.passed).length,
    failed: tests.filter((t) => !t.passed).length,
    tests,
  };
  if (tagLogs) console.log(RESULT_PREFIX + JSON.stringify(result));
  const resultFile = process.env.FARMHAND_HOST_RESULT_FILE;
  if (resultFile) writeFileSync(resultFile, JSON.stringify(result));
  if (failures > 0 || result.failed > 0) throw new Error(`${result.failed} extension-host test(s) failed`);
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}
