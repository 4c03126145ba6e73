import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import { writePrivateFile } from "../policy/privateFiles";

export type StoredKey = { url: string; apiKey: string; workerId: string; name: string };

/** Windows has no O_NOFOLLOW (its links need privileges to make): 0 there. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * Read a key file's text: never through a symlink, and only when the descriptor just opened (not a path looked
 * up again) is a plain file of this user's that nobody else may read. undefined when there is no file.
 */
export function readPrivateKeyText(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new Error(`key file ${path} is a symlink: refusing to read a key through it`);
    throw new Error(`cannot read key file ${path}: ${(e as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`key file ${path} is not a plain file`);
    if (process.platform !== "win32") {
      if ((stat.mode & 0o077) !== 0) throw new Error(`key file ${path} is readable by other users; run: chmod 600 ${path}`);
      const uid = process.getuid?.();
      if (uid !== undefined && stat.uid !== uid) throw new Error(`key file ${path} belongs to another user: refusing to use it`);
    }
    if (stat.size > MAX_KEY_FILE_BYTES) throw new Error(`key file ${path} is larger than ${MAX_KEY_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.toString("utf8", 0, read);
  } finally {
    closeSync(fd);
  }
}

/** Write a key file readable by this user only (0600), never through a symlink; its folder is made 0700 if missing. */
export function writePrivateKeyText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writePrivateFile(path, text);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new Error(`key file ${path} is a symlink: refusing to write a key through it`);
    throw e;
  }
}

/** Read the saved worker key; undefined when there is none. Refuses a file others can read, or a symlink. */
export function readKeyFile(path: string): StoredKey | undefined {
  const text = readPrivateKeyText(path);
  if (text === undefined) return undefined;
  let value: Partial<StoredKey>;
  try {
    value = JSON.parse(text) as Partial<StoredKey>;
  } catch {
    throw new Error(`key file ${path} is not valid JSON`);
  }
  if (typeof value.apiKey !== "string" || typeof value.url !== "string") throw new Error(`key file ${path} has no url and apiKey`);
  return value as StoredKey;
}

/** Save the worker key, readable by this user only. */
export function writeKeyFile(path: string, key: StoredKey): void {
  writePrivateKeyText(path, JSON.stringify(key, null, 2) + "\n");
}
