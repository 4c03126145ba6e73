// Loaded by test/harness/run-host-bench.mjs as the payload's `extensionTestsPath`: measures, inside a real extension
// host, what Farmhand costs it. Every window has an empty extension installed (test/host/fixtures/empty-extension):
// it is activated first, then a fixed piece of reference work runs, then Farmhand is activated, all timed the same
// way in the same host (activationTiming.ts). Without Farmhand loaded (the baseline window) it only samples the bare
// host; with FARMHAND_BENCH_ACTIVATION_ONLY=1 it then activates Farmhand again REACTIVATIONS times, each after its own
// reference work, and samples nothing else. Writes its figures as JSON to FARMHAND_BENCH_RESULT_FILE.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import * as vscode from "vscode";
import { EXTENSION_ID, testFarm, waitUntil, type FarmhandApi } from "../farmhand";
import { submitPrimes } from "../farmClient";
import { timedActivation, timedReferenceWork, timedSpan, untilHostIsQuiet, type ThreadSpan } from "./activationTiming";
import { sampleMemory, type MemorySample } from "./memory";

/** The largest demo.primes job: both run for the whole sample, whatever the machine. */
const N = 2_000_000_000;
const SETTLE_MS = 3_000;

/** The empty extension every bench window has installed. */
const EMPTY_EXTENSION_ID = "farmhand-tests.empty-extension";

/** The fixed reference work, then Farmhand's activation, one right after the other on the host's thread. */
export type ActivationPair = {
  /** The fixed reference work: how fast this host computes at this moment. */
  reference: ThreadSpan;
  /** activate() of Farmhand. */
  farmhand: ThreadSpan;
  /** How long Farmhand's own activate() took by its own clock (loading its module and the host's part excluded). */
  activateCallMs: number;
};

/**
 * One window's activation samples: the empty extension's activation and Farmhand's first (its module loaded, its
 * context made); in an activation-only window also REACTIVATIONS more of Farmhand's, each deactivated as VS Code
 * does and activated again with the same context, each after its own reference work.
 */
export type ActivationSample = ActivationPair & { empty: ThreadSpan; again: ActivationPair[] };

const REACTIVATIONS = 16;

/** The staged extension's entry (test/harness/stageForActivationTiming.mjs): activates Farmhand again. */
type BenchMain = { activateAgain(): Promise<FarmhandApi> };

export type HostBenchResult = {
  pid: number;
  farmhand: boolean;
  activation?: ActivationSample;
  phases: Record<string, MemorySample>;
};

export async function run(): Promise<void> {
  const file = process.env.FARMHAND_BENCH_RESULT_FILE;
  if (!file) throw new Error("FARMHAND_BENCH_RESULT_FILE is not set");
  const empty = vscode.extensions.getExtension(EMPTY_EXTENSION_ID);
  if (!empty) throw new Error(`${EMPTY_EXTENSION_ID} is not installed in this window's extensions folder`);
  const result: HostBenchResult = { pid: process.pid, farmhand: false, phases: {} };
  const settleAndSample = async (phase: string) => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    result.phases[phase] = sampleMemory();
  };

  // Joining writes a setting, and VS Code's JSON language support (its extension and server) wakes up for the
  // settings file: start it in both windows first, so it does not count as Farmhand's.
  await vscode.extensions.getExtension("vscode.json-language-features")?.activate();
  await vscode.workspace.getConfiguration("editor").update("fontSize", 13, vscode.ConfigurationTarget.Global);

  // the window has finished starting: little else runs in the host while the activations are timed
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  await untilHostIsQuiet();
  const emptySpan = (await timedActivation(empty)).span;
  const extension = vscode.extensions.getExtension<FarmhandApi>(EXTENSION_ID);
  if (!extension) {
    await settleAndSample("baseline");
    writeFileSync(file, JSON.stringify(result));
    return;
  }
  result.farmhand = true;
  await untilHostIsQuiet();
  const reference = await timedReferenceWork();
  const { exports: api, span } = await timedActivation(extension);
  result.activation = { empty: emptySpan, reference, farmhand: span, activateCallMs: api.activationMs, again: [] };
  if (process.env.FARMHAND_BENCH_ACTIVATION_ONLY === "1") {
    const main = createRequire(__filename)(join(extension.extensionPath, "bench-main.js")) as BenchMain;
    for (let i = 0; i < REACTIVATIONS; i++) {
      await untilHostIsQuiet();
      const pairReference = await timedReferenceWork();
      const again = await timedSpan(() => main.activateAgain());
      result.activation.again.push({ reference: pairReference, farmhand: again.span, activateCallMs: again.value.activationMs });
    }
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
