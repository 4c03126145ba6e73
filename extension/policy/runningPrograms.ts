import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { readText, runQuiet } from "../worker/quietReads";

/**
 * Which programs run on this machine, by name (farmhand.pauseWhileRunning): Linux reads /proc, macOS asks `ps`,
 * Windows asks its one long-lived PowerShell (windowsWatch.ts). Names only: no arguments, no other user's details.
 */

/** Linux keeps this many characters of a process's name in /proc/<pid>/comm (TASK_COMM_LEN − 1). */
const COMM_CHARS = 15;

/**
 * Every process's name under a /proc root: its `comm`, and, where that may be cut short, the whole name: the file
 * name of its first argument (`argv[0]`), or, when a program rewrote that, of its executable (readable for this
 * user's own processes). A process that ends while it is read is skipped.
 */
export async function linuxProcessNames(procRoot = "/proc"): Promise<string[] | undefined> {
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return undefined;
  }
  const names: string[] = [];
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    const comm = (await readText(join(procRoot, pid, "comm")))?.replace(/\n$/, "");
    if (!comm) continue;
    names.push(comm);
    if (comm.length < COMM_CHARS) continue;
    const argv0 = (await readText(join(procRoot, pid, "cmdline")))?.split("\0")[0];
    const base = argv0 ? baseName(argv0) : undefined;
    const whole = base?.startsWith(comm) ? base : await executableName(join(procRoot, pid, "exe"), comm);
    if (whole && whole !== comm) names.push(whole);
  }
  return names;
}

/** `ps -axo comm=`: one executable per line, most with their full path (`/Applications/zoom.us.app/Contents/MacOS/zoom.us`). */
export function parsePsNames(out: string | undefined): string[] | undefined {
  if (out === undefined) return undefined;
  return out
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map(baseName);
}

export async function macProcessNames(run: (command: string, args: string[]) => Promise<string | undefined> = (c, a) => runQuiet(c, a, 8 * 1024 * 1024)): Promise<string[] | undefined> {
  return parsePsNames(await run("ps", ["-axo", "comm="]));
}

/** How a program name compares: case-insensitively, and without Windows' `.exe` (the donor may write it or not). */
function comparable(name: string): string {
  return name.toLowerCase().replace(/\.exe$/, "");
}

/** The first of `wanted` (as the donor wrote it) that one of the running processes is, or undefined. */
export function runningOf(names: readonly string[], wanted: readonly string[]): string | undefined {
  if (wanted.length === 0) return undefined;
  const running = new Set(names.map(comparable));
  return wanted.find((w) => running.has(comparable(w)));
}

/** The executable's file name when it continues `comm` (a link into the file system; another user's is not readable). */
async function executableName(link: string, comm: string): Promise<string | undefined> {
  try {
    const name = baseName(await readlink(link)).replace(/ \(deleted\)$/, "");
    return name.startsWith(comm) ? name : undefined;
  } catch {
    return undefined;
  }
}

function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
}

