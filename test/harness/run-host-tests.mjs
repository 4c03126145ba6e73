#!/usr/bin/env node
// `npm run test:host`: the mocha suite in test/host/ inside a real VS Code extension host (code-server in headless
// Chromium), with this repo as the development extension. Prints mocha's report and one closing line
// `N passed, N failed`; exits non-zero on any failure or timeout. Logs and a screenshot go to test/artifacts/host/.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./browser.mjs";
import { buildHostSuite } from "./buildHostSuite.mjs";
import { prepareProfile, requireInstalledCodeServer, startCodeServer } from "./codeServer.mjs";
import { auditSecrets } from "./secretsAudit.mjs";
import { startTestFarm, testFarmEnv } from "./testFarm.mjs";
import { onInterrupt, runNpmScript } from "./process.mjs";
import { artifactsDir, extensionDir, repoDir } from "./paths.mjs";

const REPORTER_PREFIX = "FARMHAND_HOST_MOCHA ";
const RESULT_PREFIX = "FARMHAND_HOST_RESULT ";
const TIMEOUT_MS = Number(process.env.FARMHAND_HOST_TIMEOUT_MS ?? 300_000);
const CONTEXT_PROBE = join(repoDir, "test", "host", "fixtures", "context-probe");
const outDir = join(artifactsDir, "host");

const outcome = await main().catch((error) => {
  console.error(`host tests could not run: ${error instanceof Error ? error.message : error}`);
  return { passed: 0, failed: 1 };
});
console.log(`${outcome.passed} passed, ${outcome.failed} failed`);
process.exit(outcome.failed > 0 ? 1 : 0);

async function main() {
  requireInstalledCodeServer();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  if (extensionDir === repoDir) runNpmScript("build");
  const suiteEntry = await buildHostSuite();

  const root = mkdtempSync(join(tmpdir(), "farmhand-host-"));
  const cleanups = [() => rmSync(root, { recursive: true, force: true })];
  const cleanUp = async () => {
    for (const step of cleanups.reverse()) await step();
    cleanups.length = 0;
  };
  const removeInterruptHandler = onInterrupt(cleanUp);
  const serverLog = [];
  const workbenchLog = [];
  try {
    const profile = prepareProfile(root);
    cpSync(CONTEXT_PROBE, join(profile.extensionsDir, "farmhand-tests.context-probe-0.0.1"), { recursive: true });
    // the farm allows apps (a machine runs them only with farmhand.runApps on); the suite publishes a built example
    // recipe.printenv: the environment test (12-jobEnv) runs a recipe of that name
    const farm = await startTestFarm({ capabilities: ["apps", "recipe.printenv"] });
    cleanups.push(farm.stop);
    const env = {
      FARMHAND_HOST_TEST: "1",
      FARMHAND_HOST_TAG_LOGS: "1",
      FARMHAND_EXPECT_REMOTE: "1",
      ...testFarmEnv(farm),
      FARMHAND_TEST_APP_MODULE: await builtExampleApp("primes"),
      // Secrets a donor's shell may hold: no job process may see them (12-jobEnv.test.ts).
      GITHUB_TOKEN: "host-test-github-token",
      AWS_SECRET_ACCESS_KEY: "host-test-aws-secret",
      FARMHAND_KEY: "host-test-farmhand-key",
    };
    const server = await startCodeServer(profile, { env, onLog: (line) => serverLog.push(line) });
    cleanups.push(server.stop);
    const browser = await launchChromium(profile.chromiumDir);
    cleanups.push(browser.close);

    const page = await browser.context.newPage();
    let result;
    let settle;
    const exited = new Promise((resolve) => (settle = resolve));
    await page.exposeFunction("codeAutomationLog", (level, args) => {
      const text = Array.isArray(args) ? args.join(" ") : String(args);
      if (text.startsWith(REPORTER_PREFIX)) console.log(text.slice(REPORTER_PREFIX.length));
      else if (text.startsWith(RESULT_PREFIX)) result = JSON.parse(text.slice(RESULT_PREFIX.length));
      else workbenchLog.push(`${level}: ${text}`);
    });
    await page.exposeFunction("codeAutomationExit", (code) => settle(code));
    page.on("crash", () => settle("the page crashed"));

    const remote = (path) => `vscode-remote://${server.remoteAuthority}${path}`;
    const payload = [
      ["extensionDevelopmentPath", remote(extensionDir)],
      ["extensionTestsPath", remote(suiteEntry)],
    ];
    const url = `${server.origin}/?folder=${encodeURIComponent(profile.workspaceDir)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);

    const timedOut = Symbol("timeout");
    let timer;
    const code = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve(timedOut), TIMEOUT_MS)))]);
    clearTimeout(timer);
    await page.screenshot({ path: join(outDir, "workbench.png") }).catch(() => {});

    if (code === timedOut) {
      console.error(`host tests: no exit from the extension host within ${TIMEOUT_MS / 1000} s`);
      printTail("workbench log", workbenchLog);
      return { passed: result?.passed ?? 0, failed: (result?.failed ?? 0) + 1 };
    }
    // The suite's other half, from outside the extension host: where the worker key is (and is not).
    const audit = result ? await auditSecrets({ page, profile, farmUrl: farm.url }) : [];
    for (const check of audit) console.log(`  ${check.passed ? "✔" : "✗"} after the suite: ${check.title}${check.passed ? "" : `\n      ${check.error}`}`);
    const auditFailed = audit.filter((c) => !c.passed);
    for (const check of auditFailed) result.tests.push({ title: `after the suite: ${check.title}`, passed: false });

    if (!result) {
      console.error(`host tests: the suite ended (${typeof code === "number" ? `exit code ${code}` : code}) without reporting results`);
      printTail("workbench log", workbenchLog);
      return { passed: 0, failed: 1 };
    }
    for (const test of result.tests.filter((t) => !t.passed)) console.error(`FAILED: ${test.title}`);
    const passed = result.passed + audit.length - auditFailed.length;
    const failed = result.failed + auditFailed.length;
    if (code !== 0 && result.failed === 0) {
      console.error(`host tests: the extension host exited with code ${code} although every test passed`);
      return { passed, failed: failed + 1 };
    }
    return { passed, failed };
  } finally {
    writeFileSync(join(outDir, "code-server.log"), serverLog.join("\n") + "\n");
    writeFileSync(join(outDir, "workbench.log"), workbenchLog.join("\n") + "\n");
    await cleanUp();
    removeInterruptHandler();
  }
}

function printTail(title, lines) {
  console.error(`--- last lines of the ${title} (all of it in test/artifacts/host/) ---`);
  for (const line of lines.slice(-40)) console.error(line);
}

/** The example app's module, built when missing or stale (Debian's clang); empty when it cannot be built. */
async function builtExampleApp(name) {
  try {
    const { buildApps } = await import("../../examples/apps/build.mjs");
    return buildApps({ log: () => undefined })[name];
  } catch (error) {
    console.warn(`the example apps could not be built: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
    return "";
  }
}
