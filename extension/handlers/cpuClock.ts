import { readFileSync } from "node:fs";

/**
 * CPU time of this process, and on Linux also of the child processes it has waited for (the kernel adds an
 * exited, reaped child's time to its parent's `cutime`/`cstime`): a handler runner runs one job at a time,
 * so the difference over a job is the CPU the job used, including a recipe's command and the threads an app
 * runs in. Elsewhere child processes are not counted, so CHILDREN_MEASURED says whether they are.
 */
export const CHILDREN_MEASURED = process.platform === "linux" && reapedChildrenMs() !== undefined;

/** Start measuring; the returned function gives the CPU milliseconds used since. */
export function startCpuClock(): () => number {
  const self = process.cpuUsage();
  const children = CHILDREN_MEASURED ? (reapedChildrenMs() ?? 0) : 0;
  return () => {
    const used = process.cpuUsage(self);
    const childMs = CHILDREN_MEASURED ? Math.max(0, (reapedChildrenMs() ?? children) - children) : 0;
    return Math.round((used.user + used.system) / 1000 + childMs);
  };
}

// Linux reports cutime and cstime in clock ticks, which are 100 a second on every architecture Node supports.
const TICK_MS = 10;

function reapedChildrenMs(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces) start at field 3, "state"; cutime and cstime are 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks * TICK_MS : undefined;
  } catch {
    return undefined;
  }
}
