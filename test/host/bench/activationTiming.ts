// Activation timings in an extension host on a shared machine. The host's thread may wait for a CPU behind other
// programs for hundreds of milliseconds while an extension activates; Linux counts that wait per thread
// (/proc/thread-self/schedstat: time on a CPU, time waiting for one), so a timing here is its wall time without it.
// What remains is the host's own work and its waits for replies (the workbench, timers): what an extension's code
// decides. A fixed piece of JavaScript work, timed the same way, says how fast this host computes at that moment.
import { readFileSync } from "node:fs";
import type * as vscode from "vscode";

/** One timed span of the host's thread, in ms: wall time, time on a CPU, time waiting for a CPU. */
export type ThreadSpan = { wallMs: number; cpuMs: number; cpuWaitMs: number };

function threadTimes(): { cpuMs: number; cpuWaitMs: number } {
  let text: string;
  try {
    text = readFileSync("/proc/thread-self/schedstat", "utf8");
  } catch (error) {
    throw new Error(`the activation bench needs Linux's per-thread scheduler statistics (/proc/thread-self/schedstat): ${String(error)}`);
  }
  const [onCpuNs, waitingNs] = text.trim().split(/\s+/).map(Number);
  return { cpuMs: onCpuNs / 1e6, cpuWaitMs: waitingNs / 1e6 };
}

/** `work` run and timed on the host's thread. */
export async function timedSpan<T>(work: () => T | Promise<T>): Promise<{ value: T; span: ThreadSpan }> {
  const before = threadTimes();
  const started = performance.now();
  const value = await work();
  const wallMs = performance.now() - started;
  const after = threadTimes();
  return { value, span: { wallMs, cpuMs: after.cpuMs - before.cpuMs, cpuWaitMs: after.cpuWaitMs - before.cpuWaitMs } };
}

/**
 * Waits until the host's thread has been idle for a moment (neither running nor waiting for a CPU through a whole
 * QUIET_MS), at most QUIET_WAIT_MS: what the host still does for an earlier activation (replies arriving, disposals)
 * would otherwise run, or wait for a CPU, inside the next span and hide its sleeps.
 */
export async function untilHostIsQuiet(): Promise<void> {
  const deadline = performance.now() + QUIET_WAIT_MS;
  while (performance.now() < deadline) {
    const before = threadTimes();
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const after = threadTimes();
    if (after.cpuMs - before.cpuMs + (after.cpuWaitMs - before.cpuWaitMs) < QUIET_BUSY_MS) return;
  }
}
const QUIET_MS = 100;
const QUIET_BUSY_MS = 2;
const QUIET_WAIT_MS = 5_000;

/** activate() of an extension not yet active, timed from the caller's side: its module loaded, its context made, activate() run. */
export async function timedActivation<T>(extension: vscode.Extension<T>): Promise<{ exports: T; span: ThreadSpan }> {
  if (extension.isActive) throw new Error(`${extension.id} was already active: its activation cannot be timed (the bench loads it without activation events)`);
  const { value, span } = await timedSpan(async () => await extension.activate());
  return { exports: value, span };
}

/** A fixed piece of work (arithmetic, objects, JSON; about 30 ms of one core on a quiet 2020s machine), timed. */
export async function timedReferenceWork(): Promise<ThreadSpan> {
  const { value, span } = await timedSpan(() => {
    let hash = 0;
    for (let i = 0; i < 3_000_000; i++) hash = (hash * 31 + i) % 1_000_003;
    const rows = JSON.parse(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row ${i}` })))) as unknown[];
    return hash + rows.length;
  });
  if (value !== 508_037) throw new Error(`the reference work computed ${value}: it is not the same work any more`);
  return span;
}
