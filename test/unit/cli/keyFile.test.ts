import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { forgetKeys } from "../../../extension/cli/forgetKeys";
import { readKeyFile, readPrivateKeyText, writeKeyFile, writePrivateKeyText, type StoredKey } from "../../../extension/cli/keyFile";
import { ensurePrivateDir } from "../../../extension/policy/privateFiles";

const posix = process.platform !== "win32";
const key: StoredKey = { url: "https://x.convex.cloud", apiKey: "fh_w_secret", workerId: "w1", name: "box" };
const dirs: string[] = [];
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-keyfile-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(posix)("the CLI's key file", () => {
  it("is written 0600 in a folder made 0700, and read back", () => {
    const path = join(temp(), "conf", "worker.json");
    writeKeyFile(path, key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    expect(readKeyFile(path)).toEqual(key);
    expect(readKeyFile(join(temp(), "missing.json"))).toBeUndefined();
  });

  it("keeps any private text the same way (another key file of the CLI's)", () => {
    const path = join(temp(), "deep", "operator.key");
    writePrivateKeyText(path, "fh_c_operator\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readPrivateKeyText(path)).toBe("fh_c_operator\n");
    chmodSync(path, 0o604);
    expect(() => readPrivateKeyText(path)).toThrow(/is readable by other users/);
  });

  it("rewrites an existing file others could read as 0600", () => {
    const path = join(temp(), "worker.json");
    writeFileSync(path, "{}", { mode: 0o644 });
    chmodSync(path, 0o644);
    writeKeyFile(path, key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("refuses to read a key file others can read, saying how to fix it", () => {
    const path = join(temp(), "worker.json");
    writeFileSync(path, JSON.stringify(key));
    chmodSync(path, 0o640);
    expect(() => readKeyFile(path)).toThrow(`key file ${path} is readable by other users; run: chmod 600 ${path}`);
  });

  it("never writes or reads through a planted symlink", () => {
    const dir = temp();
    const target = join(dir, "elsewhere.json");
    writeFileSync(target, JSON.stringify(key), { mode: 0o600 });
    const link = join(dir, "worker.json");
    symlinkSync(target, link);
    expect(() => writeKeyFile(link, { ...key, apiKey: "fh_w_other" })).toThrow(/is a symlink: refusing/);
    expect(readFileSync(target, "utf8")).toBe(JSON.stringify(key));
    expect(() => readKeyFile(link)).toThrow(/is a symlink: refusing/);
  });

  it("the state folder: made 0700, a planted symlink refused, a 0755 one tightened", () => {
    const made = ensurePrivateDir(join(temp(), "state", "farmhand"));
    expect(statSync(made).mode & 0o777).toBe(0o700);
    const dir = temp();
    mkdirSync(join(dir, "real"));
    symlinkSync(join(dir, "real"), join(dir, "farmhand"));
    expect(() => ensurePrivateDir(join(dir, "farmhand"))).toThrow(/not a directory of its own/);
    const loose = join(temp(), "loose");
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    ensurePrivateDir(loose);
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });
});

describe("forgetKeys", () => {
  it("removes FARMHAND_KEY and every FARMHAND_*_KEY, nothing else", () => {
    const env: NodeJS.ProcessEnv = { FARMHAND_KEY: "a", FARMHAND_OPERATOR_KEY: "b", FARMHAND_PUBLISH_KEY: "c", FARMHAND_URL: "u", FARMHAND_KEYRING: "k", PATH: "/bin" };
    forgetKeys(env);
    expect(env).toEqual({ FARMHAND_URL: "u", FARMHAND_KEYRING: "k", PATH: "/bin" });
  });
});
