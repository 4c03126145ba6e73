#!/usr/bin/env node
// `npm run test:desktop`: the same mocha suite (test/host/) in desktop VS Code through @vscode/test-electron, for
// machines that can download VS Code (on Linux it also needs a display: run it under `xvfb-run -a` when headless).
// Offline it stops at the download with a clear message. Not part of `npm test`.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { downloadAndUnzipVSCode, runTests } from "@vscode/test-electron";
import { buildHostSuite } from "./buildHostSuite.mjs";
import { prepareProfile } from "./codeServer.mjs";
import { runNpmScript } from "./process.mjs";
import { startTestFarm, testFarmEnv } from "./testFarm.mjs";
import { repoDir } from "./paths.mjs";

const VSCODE_VERSION = process.env.FARMHAND_VSCODE_VERSION ?? "1.100.3";
const DOWNLOAD_DEADLINE_MS = 60_000;

const outcome = await main().catch((error) => {
  console.error(`desktop tests could not run: ${error instanceof Error ? error.message : error}`);
  return { passed: 0, failed: 1 };
});
console.log(`${outcome.passed} passed, ${outcome.failed} failed`);
process.exit(outcome.failed > 0 ? 1 : 0);

async function main() {
  const vscodeExecutable = await downloadVSCode();
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    throw new Error("desktop VS Code needs a display: run `xvfb-run -a npm run test:desktop` on a headless machine");
  }
  runNpmScript("build");
  const suiteEntry = await buildHostSuite();
  const root = mkdtempSync(join(tmpdir(), "farmhand-desktop-"));
  // recipe.printenv: the environment test (12-jobEnv) runs a recipe of that name
  const farm = await startTestFarm({ capabilities: ["recipe.printenv"] });
  try {
    const profile = prepareProfile(root);
    cpSync(join(repoDir, "test", "host", "fixtures", "context-probe"), join(profile.extensionsDir, "farmhand-tests.context-probe-0.0.1"), {
      recursive: true,
    });
    const resultFile = join(root, "result.json");
    const exitCode = await runTests({
      vscodeExecutablePath: vscodeExecutable,
      extensionDevelopmentPath: repoDir,
      extensionTestsPath: suiteEntry,
      extensionTestsEnv: {
        FARMHAND_HOST_TEST: "1",
        FARMHAND_HOST_RESULT_FILE: resultFile,
        ...testFarmEnv(farm),
        TMPDIR: profile.tmpDir,
        // Secrets a donor's shell may hold: no job process may see them (12-jobEnv.test.ts).
        GITHUB_TOKEN: "host-test-github-token",
        AWS_SECRET_ACCESS_KEY: "host-test-aws-secret",
        FARMHAND_KEY: "host-test-farmhand-key",
      },
      launchArgs: [
        profile.workspaceDir,
        "--user-data-dir", profile.userDataDir,
        "--extensions-dir", profile.extensionsDir,
        "--disable-workspace-trust",
        "--skip-welcome",
        "--skip-release-notes",
      ],
    }).catch((error) => {
      console.error(`VS Code ended with an error: ${error instanceof Error ? error.message : error}`);
      return 1;
    });
    if (!existsSync(resultFile)) return { passed: 0, failed: 1 };
    const result = JSON.parse(readFileSync(resultFile, "utf8"));
    return { passed: result.passed, failed: result.failed + (exitCode !== 0 && result.failed === 0 ? 1 : 0) };
  } finally {
    await farm.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Downloads VS Code into .vscode-test/ (once), or fails fast with what to do instead. */
async function downloadVSCode() {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no progress within ${DOWNLOAD_DEADLINE_MS / 1000} s`)), DOWNLOAD_DEADLINE_MS);
  });
  try {
    return await Promise.race([
      downloadAndUnzipVSCode({ version: VSCODE_VERSION, cachePath: join(repoDir, ".vscode-test"), timeout: 15_000 }),
      deadline,
    ]);
  } catch (error) {
    throw new Error(
      `could not download VS Code ${VSCODE_VERSION} (${error instanceof Error ? error.message : error}). ` +
        "test:desktop needs access to the VS Code download servers; without it, `npm run test:host` runs the same suite in code-server.",
    );
  } finally {
    clearTimeout(timer);
  }
}
