import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

/**
 * Worker threads for app instances, one per run, terminated when the run ends. A run that ends while its app
 * still runs (a limit, a cancel) also ends the runner process (runApp.ts): a thread blocked in a host call does
 * not stop on terminate(). One spare is kept started so a run does not wait for a thread to boot.
 */
export class AppThreads {
  private spare: Worker | undefined;

  take(): Worker {
    const thread = this.spare ?? spawn();
    this.spare = undefined;
    thread.ref();
    return thread;
  }

  /** Start the spare now (after a run, so its start-up is not counted in that run's time or CPU). */
  prewarm(): void {
    if (this.spare) return;
    const spare = spawn();
    spare.unref();
    spare.once("exit", () => {
      if (this.spare === spare) this.spare = undefined;
    });
    this.spare = spare;
  }

  close(): void {
    void this.spare?.terminate();
    this.spare = undefined;
  }
}

/** The app thread's V8 limits (MB). A deep recursion ends as a stack overflow trap within stackSizeMb. */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8, codeRangeSizeMb: 64, stackSizeMb: 4 } as const;

function spawn(): Worker {
  const { script, evalCode } = locateThread();
  const thread = new Worker(script, {
    eval: evalCode,
    // node:wasi warns that it is experimental on first use; a donor's terminal has no use for that.
    execArgv: ["--no-warnings"],
    // The thread's own copy of process.env: empty (WASI gets none either; this is for the thread's JS).
    env: {},
    // The thread's own JS heap and stack are small and bounded: only our WASI glue allocates JS objects there.
    // The app's linear memory is not in this heap (it is capped in the module, wasmMemory.ts).
    resourceLimits: THREAD_LIMITS,
  });
  // A spare that fails before it is used is simply replaced; a running one reports through its run.
  thread.on("error", () => undefined);
  return thread;
}

/** The bundled `appThread.js` next to the runner, else the TS source through tsx (tests, development). */
function locateThread(): { script: string; evalCode: boolean } {
  const bundled = join(__dirname, "appThread.js");
  if (existsSync(bundled)) return { script: bundled, evalCode: false };
  const source = join(__dirname, "thread.ts");
  return { script: `require("tsx/cjs"); require(${JSON.stringify(source)});`, evalCode: true };
}
