// The `app` built-in: runs one farm app (a WASI preview 1 module from the module cache) inside the handler
// runner, in a worker thread. Runs in the runner child only. A run that ends while its app is still running (time
// limit, cancel, memory limit, too much output) fails with `discardRunner`: the pool then kills this whole process,
// because Worker.terminate() cannot stop a thread blocked in a host call (poll_oneoff sleeping for an hour) and
// the thread, with its memory, would live on here; killing the process frees it at once.
import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { prepareAppModule, WasmModuleError } from "../../../convex/contract";
import { abortReason, HandlerError, messageOf } from "../../worker/errors";
import type { ImplContext } from "../protocol";
import { checkAppPin, type AppPin } from "./appPin";
import { AppStdout } from "./appStdout";
import { AppThreads } from "./appThreads";
import type { ThreadMessage, ThreadRun } from "./threadProtocol";

/** What the host hands the `app` built-in: the pinned version and where the cache keeps its bytes. */
export type AppImplOptions = AppPin & { modulePath: string; inputs?: unknown[] };

/** An app that prints more than this (stdout and stderr together) is stopped. */
const MAX_PRINTED_BYTES = 64 * 1024 * 1024;
const COMPILED_KEPT = 8;
const STDERR_TAIL_CHARS = 2_000;

const threads = new AppThreads();
/** Compiled modules by sha256 and memory cap, most recently used last. */
const compiled = new Map<string, WebAssembly.Module>();

export async function runApp(payload: unknown, ctx: ImplContext, options: unknown): Promise<unknown> {
  const app = checkOptions(options);
  const label = `app "${app.name}" v${app.version}`;
  const module = await loadModule(app, label);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const input: Record<string, unknown> = { payload: payload ?? null };
  if (ctx.checkpoint !== undefined) input.checkpoint = ctx.checkpoint;
  // a job submitted with dependsOn: its parents' results (at most LIMITS.appInputsBytes of them)
  if (app.inputs !== undefined) input.inputs = app.inputs;
  const stdin = new TextEncoder().encode(JSON.stringify(input));
  return await execute(module, stdin, app, label, ctx);
}

function checkOptions(options: unknown): AppImplOptions {
  const o = options as Partial<AppImplOptions> | null;
  if (!o || typeof o.modulePath !== "string") throw new HandlerError("the app built-in needs { modulePath, name, version, sha256, memoryMB, timeoutMs }", { retryable: false });
  return { ...checkAppPin(o), modulePath: o.modulePath, ...(Array.isArray(o.inputs) ? { inputs: o.inputs } : {}) };
}

async function loadModule(app: AppImplOptions, label: string): Promise<WebAssembly.Module> {
  const key = `${app.sha256}:${app.memoryMB}`;
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(app.modulePath);
  } catch (e) {
    throw new HandlerError(`${label}: cannot read its module from the cache: ${messageOf(e)}`);
  }
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== app.sha256) {
    // The cache checked the download; a different file now means it was damaged on disk. Fetch it again.
    await rm(app.modulePath, { force: true });
    throw new HandlerError(`${label}: the cached module's sha256 is ${actual}, not the pinned ${app.sha256}; it was removed from the cache`);
  }
  let capped: Uint8Array;
  try {
    capped = await prepareAppModule(bytes, app.memoryMB);
  } catch (e) {
    if (e instanceof WasmModuleError) throw new HandlerError(`${label} cannot run: ${e.message}`, { retryable: false });
    throw e;
  }
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(capped);
  } catch (e) {
    throw new HandlerError(`${label} is not a valid WebAssembly module: ${messageOf(e)}`, { retryable: false });
  }
  compiled.set(key, module);
  while (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value as string);
  return module;
}

function execute(module: WebAssembly.Module, stdin: Uint8Array, app: AppImplOptions, label: string, ctx: ImplContext): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const thread = threads.take();
    const stderrDecoder = new TextDecoder();
    let stderrTail = "";
    let printed = 0;
    let ended = false;
    const stdout = new AppStdout({
      progress: (fraction, status) => ctx.progress(fraction, status),
      checkpoint: (data) => ctx.saveCheckpoint(data),
      output: (text) => ctx.output(text),
    });

    const end = (outcome: () => void) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
      thread.removeAllListeners("message");
      thread.removeAllListeners("exit");
      thread.removeAllListeners("error");
      thread.on("error", () => undefined);
      void thread.terminate();
      // After this run's result is out, so its start-up is not counted against this run.
      setImmediate(() => threads.prewarm());
      outcome();
    };
    const fail = (message: string, retryable: boolean, stillRunning = false) =>
      end(() => reject(stillRunning ? discardRunner(new HandlerError(message, { retryable })) : new HandlerError(message, { retryable })));
    const withStderr = (message: string) => {
      const lines = stderrTail.trim().split("\n").slice(-5).join(" | ");
      return lines ? `${message}; stderr: ${lines}` : message;
    };
    const memoryNote = (memoryBytes: number) => `its memory reached ${mb(memoryBytes)} of its ${app.memoryMB} MB limit`;
    const nearLimit = (memoryBytes: number) => {
      const limit = app.memoryMB * 1024 * 1024;
      return memoryBytes >= limit - Math.max(limit / 16, 1024 * 1024);
    };

    const timer = setTimeout(() => fail(`${label} ran past its time limit of ${app.timeoutMs} ms and was stopped`, false, true), app.timeoutMs);
    const onAbort = () => end(() => reject(discardRunner(abortReason(ctx.signal))));
    ctx.signal.addEventListener("abort", onAbort);

    const onMessage = (m: ThreadMessage) => {
      switch (m.t) {
        case "started":
          return;
        case "stdout":
        case "stderr":
          printed += m.data.length;
          if (printed > MAX_PRINTED_BYTES) return fail(`${label} printed more than ${MAX_PRINTED_BYTES / 1024 / 1024} MiB and was stopped`, false, true);
          if (m.t === "stdout") return stdout.write(m.data);
          {
            const text = stderrDecoder.decode(m.data, { stream: true });
            stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS);
            return ctx.output(text);
          }
        case "trap":
          if (nearLimit(m.memoryBytes)) {
            // Its thread holds up to memoryMB until it is collected: ending the process frees it now.
            return fail(withStderr(`${label} hit its memory limit of ${app.memoryMB} MB: growing its memory was refused, then it stopped (${m.message})`), false, true);
          }
          return fail(withStderr(`${label} trapped (${m.message}); ${memoryNote(m.memoryBytes)}`), true);
        case "failed":
          return fail(withStderr(`${label} could not run: ${m.message}`), m.retryable);
        case "exit": {
          const out = stdout.end();
          if (m.code !== 0) {
            const memory = nearLimit(m.memoryBytes) ? ` (${memoryNote(m.memoryBytes)}: an allocation was probably refused)` : "";
            return fail(withStderr(`${label} exited with code ${m.code}${memory}`), true);
          }
          if (!out.ok) {
            const got = out.lastLine ? `"${out.lastLine.slice(0, 200)}"` : "nothing";
            return fail(withStderr(`${label} must print its result as JSON on its last line of output; it printed ${got}`), false);
          }
          return end(() => resolve(out.result));
        }
      }
    };
    thread.on("message", (m: ThreadMessage) => {
      try {
        onMessage(m);
      } catch (e) {
        // A checkpoint too big, a line too long: the job fails with the app named.
        const retryable = (e as { retryable?: unknown }).retryable !== false;
        end(() => reject(discardRunner(new HandlerError(`${label}: ${messageOf(e)}`, { retryable }))));
      }
    });
    let threadError: Error | undefined;
    thread.on("error", (e) => void (threadError = e));
    thread.on("exit", (code) => fail(`${label}: its sandbox thread ended unexpectedly (code ${code}${threadError ? `: ${threadError.message}` : ""})`, true));
    const run: ThreadRun = { t: "run", module, name: app.name, stdin };
    thread.postMessage(run, [stdin.buffer as ArrayBuffer]);
  });
}

/** Mark an error as ending a run whose thread may still be running: the runner reports it fatal (runner.ts). */
function discardRunner<E>(error: E): E {
  if (typeof error === "object" && error !== null) Object.assign(error, { discardRunner: true });
  return error;
}

function mb(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}
