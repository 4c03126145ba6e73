// Entry point of a handler child process: runs job code off the host's thread, one job at a time.
import { pathToFileURL } from "node:url";
import { BUILTIN_IMPLS } from "./impl/builtins";
import type { ChildMessage, HostMessage, Impl, ImplSpec } from "./protocol";

let current: AbortController | undefined;

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function load(spec: ImplSpec): Promise<Impl> {
  if ("builtin" in spec) {
    const impl = BUILTIN_IMPLS[spec.builtin];
    if (!impl) throw new Error(`no built-in job code named "${spec.builtin}"`);
    return impl;
  }
  const mod = await import(pathToFileURL(spec.module).href);
  const impl = mod[spec.exportName ?? "run"] ?? mod.default?.[spec.exportName ?? "run"];
  if (typeof impl !== "function") throw new Error(`${spec.module} does not export a function "${spec.exportName ?? "run"}"`);
  return impl;
}

async function run(message: Extract<HostMessage, { t: "run" }>): Promise<void> {
  const controller = (current = new AbortController());
  try {
    const impl = await load(message.impl);
    const value = await impl(message.payload, {
      jobId: message.jobId,
      attempt: message.attempt,
      signal: controller.signal,
      progress: (progress, status) => send({ t: "progress", progress, status }),
      output: (text) => send({ t: "output", text: String(text) }),
    }, message.impl.options);
    send({ t: "result", value: value === undefined ? null : value });
  } catch (e) {
    const retryable = (e as { retryable?: unknown })?.retryable;
    send({
      t: "error",
      message: e instanceof Error ? e.message : String(e),
      retryable: typeof retryable === "boolean" ? retryable : true,
    });
  } finally {
    current = undefined;
  }
}

process.on("message", (message: HostMessage) => {
  if (message.t === "run") void run(message);
  else if (message.t === "cancel") current?.abort(new Error(message.reason));
});
// The host went away: nothing left to report to.
process.on("disconnect", () => process.exit(0));
