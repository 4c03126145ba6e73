// Memory of the extension host this code runs in, and of the processes it started (Farmhand's job handlers).
import { readdirSync, readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";

export type MemorySample = {
  /** The extension host's resident set, MB. */
  rssMb: number;
  /** Its JavaScript heap in use after a full collection, MB. */
  heapUsedMb: number;
  /** Child processes of the extension host: what each runs (its command's file names) and its resident set, MB. */
  children: Array<{ command: string; rssMb: number }>;
};

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** A full garbage collection, so heap figures compare live objects, not garbage waiting to be collected. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
}

export function sampleMemory(): MemorySample {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return {
    rssMb: mb(rss),
    heapUsedMb: mb(heapUsed),
    children: childProcesses(process.pid).map((pid) => ({ command: commandOf(pid), rssMb: mb(residentBytes(pid)) })),
  };
}

/** Processes whose parent is `pid` (Linux /proc). */
function childProcesses(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function commandOf(pid: number): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    return args.slice(0, 3).map((arg) => arg.split("/").pop()).join(" ");
  } catch {
    return "?";
  }
}
