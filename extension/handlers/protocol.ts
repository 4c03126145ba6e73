import type { HandlerContext } from "../worker/handler";

/** Messages between the host (ProcessPool) and a handler runner child process. */

/** Which job code to run: a built-in implementation by name, or a module exporting `run(payload, ctx, options)`. */
export type ImplSpec = { builtin: string; options?: unknown } | { module: string; exportName?: string; options?: unknown };

export type HostMessage =
  | { t: "run"; impl: ImplSpec; payload: unknown; jobId: string; attempt: number }
  | { t: "cancel"; reason: string };

export type ChildMessage =
  | { t: "progress"; progress?: number; status?: string }
  | { t: "output"; text: string }
  | { t: "result"; value: unknown }
  /** `fatal`: the child is about to exit (an uncaught error in job code) and must not be reused. */
  | { t: "error"; message: string; retryable: boolean; fatal?: boolean };

/** The context job code gets inside the runner: the same as a handler's, made there from the messages. */
export type ImplContext = HandlerContext;

export type Impl = (payload: unknown, ctx: ImplContext, options: unknown) => Promise<unknown>;
