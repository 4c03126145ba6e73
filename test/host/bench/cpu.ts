// Loaded by test/harness/run-host-bench.mjs (mode `cpu`) as the payload's `extensionTestsPath`: the extension host's
// own CPU time while Farmhand runs 8 demo.primes jobs that stream progress, with the Farmhand views open (a donor
// watching) and with them hidden. Writes its figures as JSON to FARMHAND_BENCH_RESULT_FILE.
import { writeFileSync } from "node:fs";
import * as vscode from "vscode";
import { EXTENSION_ID, waitUntil, type FarmhandApi } from "../farmhand";
import { submitPrimes } from "../farmClient";

const JOBS = 8;
/** The largest demo.primes job: every one runs for the whole sample, whatever the machine. */
const N = 2_000_000_000;
const SETTLE_MS = 3_000;
const SAMPLE_MS = 10_000;

export type HostCpuResult = {
  /** CPU time (user + system) of the extension host per second of wall time, in ms, by phase. */
  cpuMsPerSecond: Record<string, number>;
  /** Jobs still running here after the samples (all of them, or the figures do not count). */
  jobsRunning: number;
};

async function cpuPerSecond(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
  const used = process.cpuUsage(cpuBefore);
  const wall = performance.now() - wallBefore;
  return Math.round(((used.user + used.system) / 1000 / (wall / 1000)) * 10) / 10;
}

export async function run(): Promise<void> {
  const file = process.env.FARMHAND_BENCH_RESULT_FILE;
  const url = process.env.FARMHAND_TEST_FARM_URL;
  const token = process.env.FARMHAND_TEST_WIDE_TOKEN;
  if (!file || !url || !token) throw new Error("FARMHAND_BENCH_RESULT_FILE, FARMHAND_TEST_FARM_URL and FARMHAND_TEST_WIDE_TOKEN must be set");
  // Joining writes a setting: start VS Code's JSON support first, so its start-up does not land in a sample.
  await vscode.extensions.getExtension("vscode.json-language-features")?.activate();
  await vscode.workspace.getConfiguration("editor").update("fontSize", 13, vscode.ConfigurationTarget.Global);

  const extension = vscode.extensions.getExtension<FarmhandApi>(EXTENSION_ID);
  if (!extension) throw new Error(`${EXTENSION_ID} is not loaded`);
  const api = await extension.activate();
  await vscode.commands.executeCommand("farmhand.join", { url, token });
  await vscode.commands.executeCommand("farmhand.toggle");
  await waitUntil("waiting for work", () => api.getState(), (s) => s.status.kind === "waiting", 15_000);

  const cpuMsPerSecond: Record<string, number> = {};
  await vscode.commands.executeCommand("workbench.view.extension.farmhand");
  cpuMsPerSecond.idleViewsOpen = await cpuPerSecond();

  await Promise.all(Array.from({ length: JOBS }, () => submitPrimes(N)));
  await waitUntil(`${JOBS} jobs running here`, () => api.getState().jobs.length, (n) => n === JOBS, 60_000);
  cpuMsPerSecond.jobs8ViewsOpen = await cpuPerSecond();
  const jobsRunning = api.getState().jobs.length;

  await vscode.commands.executeCommand("workbench.view.explorer"); // the Farmhand views are hidden, the jobs go on
  cpuMsPerSecond.jobs8ViewsHidden = await cpuPerSecond();
  if (api.getState().jobs.length !== JOBS) throw new Error(`only ${api.getState().jobs.length} of ${JOBS} jobs were still running after the samples`);

  await vscode.commands.executeCommand("farmhand.toggle"); // off: the jobs go back to the queue
  const result: HostCpuResult = { cpuMsPerSecond, jobsRunning };
  writeFileSync(file, JSON.stringify(result));
}
