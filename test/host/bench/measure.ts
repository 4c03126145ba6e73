// Loaded by test/harness/run-host-bench.mjs as the payload's `extensionTestsPath`: measures, inside a real extension
// host, what Farmhand costs it. Without Farmhand loaded (the baseline window) it only samples the bare host; with
// FARMHAND_BENCH_ACTIVATION_ONLY=1 it only reads the activation time. Writes its figures as JSON to
// FARMHAND_BENCH_RESULT_FILE.
import { writeFileSync } from "node:fs";
import * as vscode from "vscode";
import { EXTENSION_ID, testFarm, waitUntil, type FarmhandApi } from "../farmhand";
import { submitPrimes } from "../farmClient";
import { sampleMemory, type MemorySample } from "./memory";

/** The largest demo.primes job: both run for the whole sample, whatever the machine. */
const N = 2_000_000_000;
const SETTLE_MS = 3_000;

export type HostBenchResult = {
  pid: number;
  farmhand: boolean;
  activationMs?: number;
  phases: Record<string, MemorySample>;
};

export async function run(): Promise<void> {
  const file = process.env.FARMHAND_BENCH_RESULT_FILE;
  if (!file) throw new Error("FARMHAND_BENCH_RESULT_FILE is not set");
  const result: HostBenchResult = { pid: process.pid, farmhand: false, phases: {} };
  const settleAndSample = async (phase: string) => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    result.phases[phase] = sampleMemory();
  };

  // Joining writes a setting, and VS Code's JSON language support (its extension and server) wakes up for the
  // settings file: start it in both windows first, so it does not count as Farmhand's.
  await vscode.extensions.getExtension("vscode.json-language-features")?.activate();
  await vscode.workspace.getConfiguration("editor").update("fontSize", 13, vscode.ConfigurationTarget.Global);

  const extension = vscode.extensions.getExtension<FarmhandApi>(EXTENSION_ID);
  if (!extension) {
    await settleAndSample("baseline");
    writeFileSync(file, JSON.stringify(result));
    return;
  }
  result.farmhand = true;
  const api = await extension.activate();
  result.activationMs = api.activationMs;
  if (process.env.FARMHAND_BENCH_ACTIVATION_ONLY === "1") {
    writeFileSync(file, JSON.stringify(result));
    return;
  }
  await settleAndSample("activated");

  const { url, joinToken } = testFarm();
  await vscode.commands.executeCommand("farmhand.join", { url, token: joinToken });
  await settleAndSample("joined");

  await vscode.commands.executeCommand("farmhand.toggle");
  await waitUntil("waiting for work", () => api.getState(), (s) => s.status.kind === "waiting", 15_000);
  await settleAndSample("donatingIdle");

  await Promise.all([submitPrimes(N), submitPrimes(N)]);
  await waitUntil("two jobs running here", () => api.getState().jobs.length, (n) => n === 2, 30_000);
  await settleAndSample("working2Jobs");
  if (api.getState().jobs.length !== 2) throw new Error("the two jobs were no longer both running when memory was sampled");

  await vscode.commands.executeCommand("farmhand.toggle"); // off: the jobs go back to the queue
  writeFileSync(file, JSON.stringify(result));
}
