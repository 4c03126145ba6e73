import { execFile } from "node:child_process";
import { jobEnvironment } from "./jobEnv";

/**
 * The argument every handler runner gets: the pid of the host that started it. A runner frozen (SIGSTOP) when its
 * host died cannot notice by itself (a stopped process runs no code, and a runner leads its own session, so the
 * kernel's orphaned-group SIGCONT never comes): a later host finds it by this argument and ends it.
 */
export const HOST_PID_ARG = "--farmhand-host";

export type ProcessRow = { pid: number; stat: string; args: string };

/** `ps -A -o pid=,stat=,args=` (Linux, macOS): one row per process. */
export function parsePs(out: string): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const line of out.split("\n")) {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m) rows.push({ pid: Number(m[1]), stat: m[2], args: m[3] });
  }
  return rows;
}

/** The stopped runners whose host is gone (its pid answers no signal). */
export function orphanedFrozenRunners(rows: ProcessRow[], alive: (pid: number) => boolean): number[] {
  const pattern = new RegExp(`${HOST_PID_ARG} (\\d+)(?:\\s|$)`);
  return rows
    .filter((row) => row.stat.startsWith("T"))
    .flatMap((row) => {
      const host = pattern.exec(row.args)?.[1];
      return host !== undefined && !alive(Number(host)) ? [row.pid] : [];
    });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is someone else's
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * End the job processes a crashed host left frozen (each runner's whole process group). Best effort, never throws;
 * resolves with the pids it ended. Not on Windows, where nothing is frozen.
 */
export function reapOrphanedRunners(): Promise<number[]> {
  if (process.platform === "win32") return Promise.resolve([]);
  return new Promise((resolve) => {
    execFile("ps", ["-A", "-o", "pid=,stat=,args="], { timeout: 5_000, maxBuffer: 16 * 1024 * 1024, env: jobEnvironment() }, (error, stdout) => {
      if (error) return resolve([]);
      const ended: number[] = [];
      for (const pid of orphanedFrozenRunners(parsePs(stdout), isAlive)) {
        try {
          process.kill(-pid, "SIGKILL");
          ended.push(pid);
        } catch {
          // gone already, or not ours
        }
      }
      resolve(ended);
    });
  });
}
