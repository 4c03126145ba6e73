#!/usr/bin/env node
// What Farmhand costs a real extension host (code-server): two windows, one without Farmhand (the baseline: only the
// measuring code, test/host/bench/measure.ts, and an empty extension) and one with it (activated, joined, donating
// idle, two demo.primes jobs running), then ACTIVATIONS - 1 more Farmhand windows that only time activations, each
// activating Farmhand again and again (test/host/bench/measure.ts). Every window has an empty extension installed and
// activates it first, then runs a fixed piece of reference work, then activates Farmhand (a copy without activation
// events, so the bench activates it: stageForActivationTiming.mjs), all timed the same way in the same host. Prints
// one line `FARMHAND_BENCH {baseline, farmhand, activations}`; bench/extension.bench.ts turns it into figures. Exits
// non-zero if a window fails to report.
// `run-host-bench.mjs cpu` instead runs one Farmhand window through test/host/bench/cpu.ts (the host's CPU while 8
// jobs stream progress, 10 reports a second each) and prints `FARMHAND_BENCH_CPU {…}` for bench/hostCpu.bench.ts.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { launchChromium } from "./browser.mjs";
import { prepareProfile, requireInstalledCodeServer, startCodeServer } from "./codeServer.mjs";
import { extensionDir, repoDir } from "./paths.mjs";
import { onInterrupt, runNpmScript } from "./process.mjs";
import { stageForActivationTiming } from "./stageForActivationTiming.mjs";
import { startTestFarm, testFarmEnv } from "./testFarm.mjs";

const TIMEOUT_MS = Number(process.env.FARMHAND_HOST_TIMEOUT_MS ?? 120_000);
const ACTIVATIONS = 4;
/** An extension with no code: the baseline window's development extension, so both windows load one. */
const NO_CODE_EXTENSION = join(repoDir, "test", "host", "fixtures", "context-probe");
/**
 * An extension that activates and does nothing, installed in every window (code-server takes one development
 * extension): the reference Farmhand's activation is timed against.
 */
const EMPTY_EXTENSION = join(repoDir, "test", "host", "fixtures", "empty-extension");
/** Donate at once from the remote window, both cores, whatever else loads the machine. */
const DONATE_NOW = {
  "farmhand.preset": "full",
  "farmhand.idleMinutes": 0,
  "farmhand.otherCpuThresholdPercent": 100,
  "farmhand.donateOnBattery": true,
  "farmhand.allowRemoteDonation": true,
};
const MODE = process.argv[2] === "cpu" ? "cpu" : "memory";

const cleanups = [];
const cleanUp = async () => {
  for (const step of cleanups.reverse()) await step();
  cleanups.length = 0;
};
const removeInterruptHandler = onInterrupt(cleanUp);
try {
  requireInstalledCodeServer();
  // the memory mode measures the bundle donors install (`npm run package` builds it for production)
  if (extensionDir === repoDir) runNpmScript(MODE === "cpu" ? "build" : "vscode:prepublish");
  const script = MODE === "cpu" ? "cpu" : "measure";
  const entry = join(repoDir, "dist-test", "bench", `${script}.js`);
  await esbuild.build({
    entryPoints: [join(repoDir, "test", "host", "bench", `${script}.ts`)],
    outfile: entry,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    logLevel: "warning",
  });
  // The CPU mode's jobs are a handler its window registers through the extension's API (test/host/bench/cpu.ts).
  const farm = await startTestFarm(MODE === "cpu" ? { capabilities: ["bench.progress"] } : {});
  cleanups.push(farm.stop);
  if (MODE === "cpu") {
    const cpu = await measureWindow(extensionDir, entry, testFarmEnv(farm), { "farmhand.maxConcurrentJobs": 8 });
    console.log(`FARMHAND_BENCH_CPU ${JSON.stringify(cpu)}`);
  } else {
    await measureMemory(farm, entry);
  }
} catch (error) {
  console.error(`host bench failed: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
  removeInterruptHandler();
}

async function measureMemory(farm, entry) {
  const staged = stageForActivationTiming(extensionDir);
  cleanups.push(staged.remove);
  const baseline = await measureWindow(NO_CODE_EXTENSION, entry, {});
  const farmhand = await measureWindow(staged.dir, entry, testFarmEnv(farm));
  if (baseline.farmhand || !farmhand.farmhand) throw new Error("the baseline window loaded Farmhand, or the other did not");
  const activations = [farmhand.activation];
  while (activations.length < ACTIVATIONS) {
    activations.push((await measureWindow(staged.dir, entry, { FARMHAND_BENCH_ACTIVATION_ONLY: "1" })).activation);
  }
  console.log(`FARMHAND_BENCH ${JSON.stringify({ baseline, farmhand, activations })}`);
}

/**
 * One code-server window with `developmentPath` as its development extension, the empty extension installed, and
 * measure.js as its test runner.
 */
async function measureWindow(developmentPath, entry, env, settings = {}) {
  const root = mkdtempSync(join(tmpdir(), "farmhand-bench-"));
  const stops = [() => rmSync(root, { recursive: true, force: true })];
  cleanups.push(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  const resultFile = join(root, "result.json");
  const profile = prepareProfile(root, { ...DONATE_NOW, ...settings });
  // found by the scan code-server makes of a profile's extensions folder when it first starts
  cpSync(EMPTY_EXTENSION, join(profile.extensionsDir, "farmhand-tests.empty-extension-0.0.1"), { recursive: true });
  const log = [];
  const server = await startCodeServer(profile, { env: { ...env, FARMHAND_BENCH_RESULT_FILE: resultFile }, onLog: (line) => log.push(line) });
  stops.push(server.stop);
  const browser = await launchChromium(profile.chromiumDir);
  stops.push(browser.close);
  const page = await browser.context.newPage();
  let settle;
  const exited = new Promise((resolve) => (settle = resolve));
  await page.exposeFunction("codeAutomationLog", (level, args) => log.push(`${level}: ${Array.isArray(args) ? args.join(" ") : args}`));
  await page.exposeFunction("codeAutomationExit", (code) => settle(code));
  page.on("crash", () => settle("the page crashed"));
  const remote = (path) => `vscode-remote://${server.remoteAuthority}${path}`;
  const payload = [
    ["extensionDevelopmentPath", remote(developmentPath)],
    ["extensionTestsPath", remote(entry)],
  ];
  await page.goto(`${server.origin}/?folder=${encodeURIComponent(profile.workspaceDir)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  let timer;
  const code = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), TIMEOUT_MS)))]);
  clearTimeout(timer);
  if (code !== 0) {
    console.error(log.slice(-40).join("\n"));
    throw new Error(`the measuring window ended with ${code}`);
  }
  const result = JSON.parse(readFileSync(resultFile, "utf8"));
  for (const stop of stops.splice(0).reverse()) await stop();
  return result;
}
