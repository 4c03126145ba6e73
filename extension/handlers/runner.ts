// Entry point of a handler child process: runs job code off the host's thread, one job at a time.
import { pathToFileURL } from "node:url";
import { checkCheckpoint } from "./checkpoint";
import { CHILDREN_MEASURED, startCpuClock } from "./cpuClock";
import { BUILTIN_IMPLS, CPU_MEASURED_ELSEWHERE, SPAWNS_PROCESSES } from "./impl/builtins";
import { messageOf } from "../worker/errors";
import type { ChildMessage, HostMessage, Impl, ImplSpec } from "./protocol";

const PROGRESS_EVERY_MS = 100;

let current: AbortController | undefined;
let pendingProgress: Extract<ChildMessage, { t: "progress" }> | undefined;
let progressTimer: ReturnType<typeof setTimeout> | undefined;
let lastProgressAt = 0;

function send(message: ChildMessage): void {
  process.send?.(message);
}

/** At most one progress message per PROGRESS_EVERY_MS; the latest one always gets through. */
function reportProgress(progress?: number, status?: string): void {
  pendingProgress = { t: "progress", progress, status };
  if (progressTimer) return;
  const wait = lastProgressAt + PROGRESS_EVERY_MS - Date.now();
  if (wait <= 0) return flushProgress();
  progressTimer = setTimeout(flushProgress, wait);
}

function flushProgress(): void {
  if (progressTimer) clearTimeout(progressTimer);
  progressTimer = undefined;
  if (!pendingProgress) return;
  send(pendingProgress);
  pendingProgress = undefined;
  lastProgressAt = Date.now();
}

async function load(spec: ImplSpec): Promise<Impl> {
  if ("builtin" in spec) {
    const impl = BUILTIN_IMPLS[spec.builtin];
    if (!impl) throw new Error(`no built-in job code named "${spec.builtin}"`);
    return impl;
  }
  const name = spec.exportName ?? "run";
  const mod = (await import(pathToFileURL(spec.module).href)) as Record<string, unknown> & { default?: Record<string, unknown> };
  const impl = mod[name] ?? mod.default?.[name];
  if (typeof impl !== "function") throw new Error(`${spec.module} does not export a function "${name}"`);
  return impl as Impl;
}

async function run(message: Extract<HostMessage, { t: "run" }>): Promise<void> {
  const controller = (current = new AbortController());
  const cpuClock = startCpuClock();
  let cpuOverride: number | null | undefined = cpuKnownUpFront(message.impl);
  const cpuMs = () => (cpuOverride === undefined ? cpuClock() : (cpuOverride ?? undefined));
  try {
    const impl = await load(message.impl);
    // Canceled while the job code was still loading: do not start it. Loading can block this process (a heavy
    // import), and a cancel that arrived meanwhile is handled only once the event loop gets to it: let it.
    await afterWaitingMessages();
    if (controller.signal.aborted) throw controller.signal.reason;
    const value = await impl(message.payload, {
      jobId: message.jobId,
      attempt: message.attempt,
      signal: controller.signal,
      progress: reportProgress,
      output: (text) => send({ t: "output", text: String(text) }),
      checkpoint: message.checkpoint,
      ...(message.traceparent !== undefined ? { traceparent: message.traceparent } : {}),
      saveCheckpoint: (data) => send({ t: "checkpoint", data: checkCheckpoint(data) }),
      setCpuMs: (ms) => {
        cpuOverride = typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : null;
      },
    }, message.impl.options);
    flushProgress();
    send({ t: "result", value: value === undefined ? null : value, cpuMs: cpuMs() });
  } catch (e) {
    flushProgress();
    const retryable = (e as { retryable?: unknown })?.retryable;
    send({
      t: "error",
      message: messageOf(e),
      retryable: typeof retryable === "boolean" ? retryable : true,
      // Job code that could not stop what it started here (an app thread blocked in a host call): end this process.
      ...((e as { discardRunner?: unknown })?.discardRunner === true ? { fatal: true } : {}),
      cpuMs: cpuMs(),
    });
  } finally {
    current = undefined;
  }
}

/** Once round the event loop through its poll phase: messages that arrived while this process was busy are handled. */
function afterWaitingMessages(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** null: this built-in's CPU time cannot be measured here; undefined: measure it. */
function cpuKnownUpFront(spec: ImplSpec): null | undefined {
  if (!("builtin" in spec)) return undefined;
  if (CPU_MEASURED_ELSEWHERE.has(spec.builtin)) return null;
  if (SPAWNS_PROCESSES.has(spec.builtin) && !CHILDREN_MEASURED) return null;
  return undefined;
}

process.on("message", (message: HostMessage) => {
  if (message.t === "run") void run(message);
  else if (message.t === "cancel") current?.abort(new Error(message.reason));
});
// Job code that throws outside its promise (a stray callback) fails the job; this child is then done.
function fatal(e: unknown): void {
  send({ t: "error", message: `uncaught error in job code: ${messageOf(e)}`, retryable: true, fatal: true });
  process.exit(1);
}
process.on("uncaughtException", fatal);
process.on("unhandledRejection", fatal);
// Ctrl-C in a terminal reaches the whole process group; the host decides (drain or stop) and tells us.
process.on("SIGINT", () => undefined);
// A cancel sends TERM to this child's whole process group, for the processes the job code started; the runner
// itself hears of the cancel (with its reason) by message, reports how the job ended, and is killed with the group
// if the job code does not stop within the grace period.
process.on("SIGTERM", () => undefined);
// The host went away: nothing left to report to.
process.on("disconnect", () => process.exit(0));
