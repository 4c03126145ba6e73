import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Farmhand's per-user state on this machine (the one-donor lock, the shared activity stamp; the CLI's key file):
 * `$XDG_CONFIG_HOME/farmhand`, else `~/.config/farmhand` (`%APPDATA%\farmhand` on Windows). Never a shared
 * temporary folder, where another user could block donating or plant a symlink under a predictable name.
 */
export function userStateDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === "win32" && env.APPDATA) return join(env.APPDATA, "farmhand");
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "farmhand");
}

/** Windows has no O_NOFOLLOW (its links need privileges to make): 0 there. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Make `dir` (and its parents) if needed and make sure only this user can use it: a real directory (not a
 * symlink), owned by this user, mode 0700. Throws when it cannot be made so.
 */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`${dir} is not a directory of its own (a symlink or a file): refusing to use it`);
  if (process.platform === "win32") return dir;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new Error(`${dir} belongs to another user: refusing to use it`);
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/** Read a small file without following a symlink; undefined when it is missing, a symlink or not a plain file. */
export function readPrivateFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW);
  } catch {
    return undefined; // missing, or a symlink (ELOOP)
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > 64 * 1024) return undefined;
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.toString("utf8", 0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write a small file readable by this user only (0600), never through a symlink: `exclusive` creates a new file
 * and fails if anything (a symlink included) is in the way; otherwise an existing plain file is replaced in place.
 */
export function writePrivateFile(path: string, text: string, { exclusive = false } = {}): void {
  const flags = constants.O_WRONLY | constants.O_CREAT | NOFOLLOW | (exclusive ? constants.O_EXCL : constants.O_TRUNC);
  const fd = openSync(path, flags, 0o600);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a plain file`);
    // A file that was there before keeps its mode through O_TRUNC: make it this user's only, on the descriptor.
    if (process.platform !== "win32") fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
