import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

/**
 * Reads of the machine that may fail without it being anyone's fault (a sensor missing, a process gone, a file only
 * root may read): each answers undefined (or nothing) instead of throwing, and the caller treats that as not known.
 */

/** A file's text, or undefined when it cannot be read. */
export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A folder's entries, sorted; none when it cannot be read. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** Runs a command hidden; its stdout, or undefined when it cannot be run, fails or takes longer than 5 s. */
export function runQuiet(command: string, args: string[], maxBuffer?: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 5_000, windowsHide: true, ...(maxBuffer ? { maxBuffer } : {}) }, (error, stdout) => resolve(error ? undefined : stdout));
  });
}
