import type { HandlerContext } from "../worker/handler";

/** Messages between the host (ProcessPool) and a handler runner child process. */

/** Which job code to run: a built-in implementation by name, or a module exporting `run(payload, ctx, options)`. */
export type ImplSpec = { builtin: string; options?: unknown } | { module: string; exportName?: string; options?: unknown };

export type HostMessage =
  /** `checkpoint`: the latest checkpoint kept for this job (base64), when it resumes; `traceparent`: the run's trace context. */
  | { t: "run"; impl: ImplSpec; payload: unknown; jobId: string; attempt: number; checkpoint?: string; traceparent?: string }
  | { t: "cancel"; reason: string };

export type ChildMessage =
  | { t: "progress"; progress?: number; status?: string }
  | { t: "output"; text: string }
  /** A checkpoint the job code saved (base64, checked against MAX_CHECKPOINT_BYTES). */
  | { t: "checkpoint"; data: string }
  /** `cpuMs` on result and error: the CPU time the job used, when it could be measured. */
  | { t: "result"; value: unknown; cpuMs?: number }
  /**
   * `fatal`: the child must not be reused: it is about to exit (an uncaught error in job code), or its job code
   * left something running that only ending the process stops (an app thread blocked in a host call); the pool
   * kills it with its process group.
   */
  | { t: "error"; message: string; retryable: boolean; fatal?: boolean; cpuMs?: number };

/** The context job code gets inside the runner: a handler's, made there from the messages, plus checkpoints and CPU time. */
export type ImplContext = HandlerContext & {
  /** The checkpoint this job resumes from (base64), when an earlier run saved one. */
  checkpoint?: string;
  /** Keep a checkpoint (base64, at most 512 KiB decoded) for the next run; throws (not retryable) if it is not one. */
  saveCheckpoint(data: string): void;
  /**
   * Replace the CPU time the runner measures for this job (this process, plus on Linux the processes it
   * waited for): `null` when the work happens where it cannot be measured (another server, a detached process).
   */
  setCpuMs(ms: number | null): void;
};

export type Impl = (payload: unknown, ctx: ImplContext, options: unknown) => Promise<unknown>;
