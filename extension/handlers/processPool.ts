import { fork, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { abortReason, HandlerError } from "../worker/errors";
import type { HandlerContext } from "../worker/handler";
import { runnerEnvironment } from "./jobEnv";
import { HOST_PID_ARG, reapOrphanedRunners } from "./orphans";
import type { ChildMessage, HostMessage, ImplSpec } from "./protocol";

export type ProcessPoolOptions = {
  /** The runner script; by default the bundled `handlerRunner.js` next to this code, else `runner.ts` via tsx. */
  runnerPath?: string;
  execArgv?: string[];
  /** OS niceness of the children (0..19; higher is politer). Default 19: job code gets only CPU nobody else wants. */
  niceness?: number;
  /** Children kept warm between jobs. */
  maxIdle?: number;
  /** After a cancel, how long job code has to stop before its process is killed. */
  graceMs?: number;
  /**
   * Offer the engine a freezer for each job (SIGSTOP/SIGCONT to its process group). Default: everywhere but
   * Windows, which has neither signals nor process groups.
   */
  freezable?: boolean;
};

type Child = { process: ChildProcess; busy: boolean };

/**
 * What a pool run may get beyond the engine's HandlerContext: the checkpoint the job resumes from, where
 * checkpoints the job saves go (the engine uploads them), and where the CPU time the job used goes (called
 * once, before the run settles, whether it succeeded or failed, when it could be measured).
 */
export type PoolRunContext = HandlerContext & {
  checkpoint?: string;
  onCheckpoint?(data: string): void;
  onCpuMs?(cpuMs: number): void;
};

/**
 * Runs job code in child processes at lowered priority, one job per child at a time, reusing healthy
 * children. A child that crashes fails only its job; a canceled job is signalled, then killed after a grace.
 */
export class ProcessPool {
  private readonly idle: Child[] = [];
  private readonly all = new Set<Child>();
  private closed = false;
  private readonly runnerPath: string;
  private readonly execArgv: string[];

  constructor(private readonly options: ProcessPoolOptions = {}) {
    const located = options.runnerPath ? { path: options.runnerPath, execArgv: [] } : locateRunner();
    this.runnerPath = located.path;
    this.execArgv = options.execArgv ?? located.execArgv;
    // Job processes a crashed host left frozen would hold their memory for ever: end them (best effort).
    if (this.options.freezable ?? process.platform !== "win32") void reapOrphanedRunners();
  }

  /** Child pids (for tests and diagnostics). */
  get pids(): number[] {
    return [...this.all].map((c) => c.process.pid ?? -1);
  }

  run(impl: ImplSpec, payload: unknown, ctx: PoolRunContext): Promise<unknown> {
    if (this.closed) return Promise.reject(new HandlerError("the handler pool is closed"));
    if (ctx.signal.aborted) return Promise.reject(abortReason(ctx.signal));
    const child = this.take();
    return new Promise((resolve, reject) => {
      let settled = false;
      let frozen = false;
      let killTimer: ReturnType<typeof setTimeout> | undefined;
      const finish = (healthy: boolean, outcome: () => void) => {
        if (settled) return;
        settled = true;
        // A message sent just before the freeze can end the job after it: a reused child must run.
        if (frozen) signalJob(child.process, "SIGCONT");
        frozen = false;
        child.process.off("message", onMessage);
        child.process.off("exit", onExit);
        ctx.signal.removeEventListener("abort", onAbort);
        if (killTimer) clearTimeout(killTimer);
        if (healthy) this.giveBack(child);
        else this.discard(child);
        outcome();
      };
      const onMessage = (m: ChildMessage) => {
        switch (m.t) {
          case "progress":
            return ctx.progress(m.progress, m.status);
          case "output":
            return ctx.output(m.text);
          case "checkpoint":
            return ctx.onCheckpoint?.(m.data);
          case "result":
            if (m.cpuMs !== undefined) ctx.onCpuMs?.(m.cpuMs);
            return finish(!ctx.signal.aborted, () => resolve(m.value));
          case "error":
            if (m.cpuMs !== undefined) ctx.onCpuMs?.(m.cpuMs);
            return finish(!ctx.signal.aborted && !m.fatal, () => reject(new HandlerError(m.message, { retryable: m.retryable })));
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        const how = signal ? `signal ${signal}` : `code ${code}`;
        const error = ctx.signal.aborted
          ? abortReason(ctx.signal)
          : new HandlerError(`the handler's process exited unexpectedly (${how})`);
        finish(false, () => reject(error));
      };
      const onAbort = () => {
        if (frozen) {
          // Given back or canceled while frozen: its latest checkpoint is already saved, and waking it for the
          // grace period would spend the CPU of an owner who is using the machine.
          signalJob(child.process, "SIGKILL");
          return;
        }
        this.send(child, { t: "cancel", reason: String((ctx.signal.reason as Error)?.message ?? "aborted") });
        // The job's whole process group (the runner and whatever job code started) hears TERM, then KILL.
        signalJob(child.process, "SIGTERM");
        killTimer = setTimeout(() => signalJob(child.process, "SIGKILL"), this.options.graceMs ?? 5_000);
      };
      child.process.on("message", onMessage);
      child.process.on("exit", onExit);
      ctx.signal.addEventListener("abort", onAbort);
      this.send(child, { t: "run", impl, payload, jobId: ctx.jobId, attempt: ctx.attempt, checkpoint: ctx.checkpoint, traceparent: ctx.traceparent });
      if (this.options.freezable ?? process.platform !== "win32") {
        ctx.setFreezer?.({
          freeze: () => {
            if (settled || frozen) return;
            frozen = true;
            signalJob(child.process, "SIGSTOP");
          },
          thaw: () => {
            if (settled || !frozen) return;
            frozen = false;
            signalJob(child.process, "SIGCONT");
          },
        });
      }
    });
  }

  /** Kill every child, with whatever its job code started. */
  close(): void {
    this.closed = true;
    for (const child of this.all) signalJob(child.process, "SIGKILL");
    this.all.clear();
    this.idle.length = 0;
  }

  private take(): Child {
    let child = this.idle.pop();
    while (child && (child.process.exitCode !== null || child.process.signalCode !== null)) child = this.idle.pop();
    if (!child) child = this.spawn();
    child.busy = true;
    child.process.ref();
    (child.process.channel as { ref?: () => void } | undefined)?.ref?.();
    return child;
  }

  private spawn(): Child {
    // Each child leads a session and process group of its own (POSIX): whatever its job code starts (a recipe's
    // command and that command's children) is in the group, so a cancel reaches all of it. On Linux it also
    // matters for priority: Linux schedules by session ("autogroup") before it looks at niceness, and a child in
    // the host's session would spend the host's own share; the child's session is niced as a whole.
    const ownGroup = process.platform !== "win32";
    // The host's pid on the command line: a later host can tell that a frozen runner was left behind (orphans.ts).
    const proc = fork(this.runnerPath, [HOST_PID_ARG, String(process.pid)], {
      execArgv: this.execArgv,
      // Not the host's environment: job code in the runner (and what it starts) sees only jobEnv.ts's allow-list.
      env: runnerEnvironment(),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      detached: ownGroup,
    });
    const child: Child = { process: proc, busy: false };
    this.all.add(child);
    proc.on("exit", () => this.discard(child));
    proc.on("error", () => this.discard(child));
    if (proc.pid) lowerPriority(proc.pid, this.options.niceness ?? 19, process.platform === "linux");
    return child;
  }

  private giveBack(child: Child): void {
    child.busy = false;
    if (this.closed || this.idle.length >= (this.options.maxIdle ?? 4)) return this.discard(child);
    // An idle child must not keep the host process alive.
    child.process.unref();
    (child.process.channel as { unref?: () => void } | undefined)?.unref?.();
    this.idle.push(child);
  }

  private discard(child: Child): void {
    if (!this.all.delete(child)) return;
    const i = this.idle.indexOf(child);
    if (i >= 0) this.idle.splice(i, 1);
    // Its job was aborted or it crashed: end what its job code may have left running too.
    if (child.process.exitCode === null && child.process.signalCode === null) signalJob(child.process, "SIGKILL");
  }

  private send(child: Child, message: HostMessage): void {
    try {
      child.process.send(message);
    } catch {
      // The child died; its exit event fails the job.
    }
  }
}

/**
 * Signal a child and its process group (the job code's own children included). Windows has no process groups:
 * there only the child itself is signalled.
 */
function signalJob(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid !== undefined && process.platform !== "win32") {
    try {
      process.kill(-pid, signal);
      return;
    } catch {
      // the group is gone already; the child itself may still be there
    }
  }
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
}

/** Best effort: where it is not permitted, the job still runs, just at normal priority. */
function lowerPriority(pid: number, niceness: number, autogroup: boolean): void {
  try {
    setPriority(pid, niceness);
  } catch {
    // not permitted
  }
  if (!autogroup) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
  } catch {
    // autogroups disabled, or /proc not writable
  }
}

/** Find the runner: the bundled JS next to this file, else the TS source run through tsx (tests, dev). */
function locateRunner(): { path: string; execArgv: string[] } {
  // The package is CommonJS: the bundle, tsx and vitest all provide __dirname.
  const bundled = join(__dirname, "handlerRunner.js");
  if (existsSync(bundled)) return { path: bundled, execArgv: [] };
  return { path: join(__dirname, "runner.ts"), execArgv: ["--import", "tsx"] };
}
