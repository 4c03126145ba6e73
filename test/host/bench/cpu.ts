// Loaded by test/harness/run-host-bench.mjs (mode `cpu`) as the payload's `extensionTestsPath`: the extension host's
// own CPU time while Farmhand runs 8 jobs that each report progress 10 times a second (the most a job's progress
// reaches the host), with the Farmhand views open (a donor watching) and with them hidden. The jobs are a handler
// registered through the extension's API that only reports progress, so the event rate does not depend on how much
// CPU the machine has to spare. Writes its figures as JSON to FARMHAND_BENCH_RESULT_FILE.
import { writeFileSync } from "node:fs";
import * as vscode from "vscode";
import { EXTENSION_ID, waitUntil, type FarmhandApi } from "../farmhand";
import { submitJob } from "../farmClient";

const JOBS = 8;
/** Granted by the test farm in this mode (run-host-bench.mjs). */
const PROGRESS_JOB = "bench.progress";
const PROGRESS_EVERY_MS = 100;
const SETTLE_MS = 3_000;
const SAMPLE_MS = 10_000;

export type HostCpuResult = {
  /** CPU time (user + system) of the extension host per second of wall time, in ms, by phase. */
  cpuMsPerSecond: Record<string, number>;
  /** Jobs still running here after the samples (all of them, or the figures do not count). */
  jobsRunning: number;
  /** Progress reports the jobs made per second during the samples. */
  progressPerSecond: number;
};

type ProgressContext = { signal: AbortSignal; progress(fraction?: number, status?: string): void };
type HandlerApi = FarmhandApi & {
  registerHandler(handler: { type: string; run(payload: unknown, ctx: ProgressContext): Promise<unknown> }): vscode.Disposable;
};

let reports = 0;
/** Reports progress every PROGRESS_EVERY_MS until canceled; never finishes on its own. */
function progressJob(_payload: unknown, ctx: ProgressContext): Promise<unknown> {
  return new Promise((resolve) => {
    let step = 0;
    const timer = setInterval(() => {
      step++;
      reports++;
      ctx.progress((step % 1_000) / 1_000, `step ${step}`);
    }, PROGRESS_EVERY_MS);
    ctx.signal.addEventListener("abort", () => {
      clearInterval(timer);
      resolve(null);
    });
  });
}

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

  const extension = vscode.extensions.getExtension<HandlerApi>(EXTENSION_ID);
  if (!extension) throw new Error(`${EXTENSION_ID} is not loaded`);
  const api = await extension.activate();
  const registered = api.registerHandler({ type: PROGRESS_JOB, run: progressJob });
  await vscode.commands.executeCommand("farmhand.join", { url, token });
  await vscode.commands.executeCommand("farmhand.toggle");
  await waitUntil("waiting for work", () => api.getState(), (s) => s.status.kind === "waiting", 15_000);

  const cpuMsPerSecond: Record<string, number> = {};
  await vscode.commands.executeCommand("workbench.view.extension.farmhand");
  cpuMsPerSecond.idleViewsOpen = await cpuPerSecond();

  await Promise.all(Array.from({ length: JOBS }, () => submitJob(PROGRESS_JOB, {})));
  await waitUntil(`${JOBS} jobs running here`, () => api.getState().jobs.length, (n) => n === JOBS, 60_000);
  const reportsBefore = reports;
  const started = performance.now();
  cpuMsPerSecond.jobs8ViewsOpen = await cpuPerSecond();

  await vscode.commands.executeCommand("workbench.view.explorer"); // the Farmhand views are hidden, the jobs go on
  cpuMsPerSecond.jobs8ViewsHidden = await cpuPerSecond();
  const progressPerSecond = Math.round((reports - reportsBefore) / ((performance.now() - started) / 1000));
  const jobsRunning = api.getState().jobs.length;
  if (jobsRunning !== JOBS) throw new Error(`only ${jobsRunning} of ${JOBS} jobs were still running after the samples`);

  await vscode.commands.executeCommand("farmhand.toggle"); // off: the jobs go back to the queue
  registered.dispose();
  const result: HostCpuResult = { cpuMsPerSecond, jobsRunning, progressPerSecond };
  writeFileSync(file, JSON.stringify(result));
}
