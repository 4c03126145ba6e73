import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export type StoredKey = { url: string; apiKey: string; workerId: string; name: string };

/** Read the saved worker key; undefined when there is none. Refuses a file others can read. */
export function readKeyFile(path: string): StoredKey | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read key file ${path}: ${(e as Error).message}`);
  }
  if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
    throw new Error(`key file ${path} is readable by other users; run: chmod 600 ${path}`);
  }
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
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify(key, null, 2) + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
}
