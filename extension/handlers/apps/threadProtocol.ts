/** Messages between the handler runner's main thread and the worker thread that runs one app instance. */

export type ThreadRun = {
  t: "run";
  module: WebAssembly.Module;
  /** argv[0], the only argument an app gets. */
  name: string;
  /** All of the app's stdin. */
  stdin: Uint8Array;
};

export type ThreadMessage =
  /** The instance exists and `_start` is about to run. */
  | { t: "started" }
  | { t: "stdout"; data: Uint8Array }
  | { t: "stderr"; data: Uint8Array }
  /** `_start` returned (code 0) or the app called proc_exit. */
  | { t: "exit"; code: number; memoryBytes: number }
  /** A WebAssembly trap (unreachable, out-of-bounds access, stack overflow, …). */
  | { t: "trap"; message: string; memoryBytes: number }
  /** The instance could not be created or started; `retryable` when it may work elsewhere (memory ran out here). */
  | { t: "failed"; message: string; retryable: boolean };
