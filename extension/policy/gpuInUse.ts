import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Is someone else using the GPU? NVIDIA only (through `nvidia-smi`, as machineFacts.ts reports GPUs): another
 * process's compute context with real memory, or — while none of our GPU jobs runs, so the load cannot be ours —
 * the GPU busy above a threshold (a game or a video call draws through graphics, which lists no compute process).
 */
export type ComputeApp = { pid: number; usedMiB?: number };

export const COMPUTE_APPS_QUERY = ["--query-compute-apps=pid,used_memory", "--format=csv,noheader"];
const UTILIZATION_QUERY = ["--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"];

/** `pid, used_memory` lines ("4242, 1536 MiB"; "[N/A]" where the driver hides it, as under Windows WDDM). */
export function parseComputeApps(out: string): ComputeApp[] {
  const apps: ComputeApp[] = [];
  for (const line of out.split(/\r?\n/)) {
    const match = /^\s*(\d+)\s*,\s*(?:(\d+)\s*(?:MiB)?|\[N\/A\]|\[Not Supported\]|\[Insufficient Permissions\])\s*$/.exec(line);
    if (!match) continue;
    apps.push({ pid: Number(match[1]), ...(match[2] === undefined ? {} : { usedMiB: Number(match[2]) }) });
  }
  return apps;
}

/** One utilization percentage per GPU; the busiest counts. Undefined when no line is a number. */
export function parseUtilization(out: string): number | undefined {
  const values = out
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => /^\d+(\.\d+)?$/.test(l))
    .map(Number);
  return values.length ? Math.max(...values) : undefined;
}

/** Linux: the parent of a process, from /proc/<pid>/stat; undefined when it cannot be read (gone, another OS). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** Is `pid` this process or one of its descendants (our own jobs)? Walks parents up to init. */
export function isOurs(pid: number, self: number, parent: (pid: number) => number | undefined = parentOf): boolean {
  for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = parent(p), hops++) {
    if (p === self) return true;
  }
  return false;
}

export type GpuUse = { busy: false } | { busy: true; why: string };

export type GpuProbeOptions = {
  /** Another process's compute context counts from this much memory (a bare context holds ~100 MiB). */
  minOthersMiB?: number;
  /** GPU busy above this percentage, while no GPU job of ours runs, counts as the donor's use. */
  utilizationPercent?: number;
  run?: (args: string[]) => Promise<string | undefined>;
  self?: number;
  parent?: (pid: number) => number | undefined;
};

/** One look at the GPU; undefined when nvidia-smi gives no answer (no NVIDIA GPU, no driver). */
export async function readGpuUse(ourGpuJobsRunning: boolean, options: GpuProbeOptions = {}): Promise<GpuUse | undefined> {
  const run = options.run ?? runNvidiaSmi;
  const apps = await run(COMPUTE_APPS_QUERY);
  if (apps === undefined) return undefined;
  const self = options.self ?? process.pid;
  const parent = options.parent ?? parentOf;
  const others = parseComputeApps(apps).filter((a) => {
    if (a.usedMiB !== undefined && a.usedMiB < (options.minOthersMiB ?? 150)) return false;
    // A pid this process cannot see (another OS, a container with the host's pids) may be our own job: it counts
    // only while none of ours runs.
    if (parent(a.pid) === undefined) return !ourGpuJobsRunning;
    return !isOurs(a.pid, self, parent);
  });
  if (others.length) return { busy: true, why: `another program uses the GPU (pid ${others.map((a) => a.pid).join(", ")})` };
  if (ourGpuJobsRunning) return { busy: false };
  const utilization = parseUtilization((await run(UTILIZATION_QUERY)) ?? "");
  const threshold = options.utilizationPercent ?? 30;
  return utilization !== undefined && utilization > threshold ? { busy: true, why: `the GPU is ${utilization} % busy with other programs` } : { busy: false };
}

function runNvidiaSmi(args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile("nvidia-smi", args, { timeout: 5_000, windowsHide: true }, (error, stdout) => resolve(error ? undefined : stdout));
  });
}
