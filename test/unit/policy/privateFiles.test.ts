import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MachineLock } from "../../../extension/policy/machineLock";
import { ensurePrivateDir, readPrivateFile, userStateDir, writePrivateFile } from "../../../extension/policy/privateFiles";
import { SharedActivity } from "../../../extension/policy/sharedActivity";

const mode = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.platform === "win32")("the user's private state folder", () => {
  let root: string;
  let dir: string;
  /** What another user would like us to overwrite or read, through a symlink planted in our folder. */
  let victim: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "farmhand-state-"));
    dir = join(root, "config", "farmhand");
    victim = join(root, "victim.txt");
    writeFileSync(victim, "precious");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("lives under XDG_CONFIG_HOME or ~/.config, never in the shared temporary folder", () => {
    expect(userStateDir({ XDG_CONFIG_HOME: "/cfg" }, "linux")).toBe("/cfg/farmhand");
    expect(userStateDir({}, "linux")).toMatch(/\/\.config\/farmhand$/);
    expect(userStateDir({}, "linux").startsWith(tmpdir())).toBe(false);
  });

  it("is made 0700, and tightened to 0700 when it exists wider", () => {
    ensurePrivateDir(dir);
    expect(mode(dir)).toBe(0o700);
    chmodSync(dir, 0o755);
    ensurePrivateDir(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it("refuses a folder that is a symlink", () => {
    mkdirSync(join(root, "elsewhere"));
    mkdirSync(join(root, "config"));
    symlinkSync(join(root, "elsewhere"), dir);
    expect(() => ensurePrivateDir(dir)).toThrow(/not a directory of its own/);
  });

  it("writes files 0600 and never through a planted symlink", () => {
    ensurePrivateDir(dir);
    const file = join(dir, "activity");
    writePrivateFile(file, "1");
    expect(mode(file)).toBe(0o600);
    const planted = join(dir, "planted");
    symlinkSync(victim, planted);
    expect(() => writePrivateFile(planted, "overwritten")).toThrow();
    expect(readPrivateFile(planted)).toBeUndefined();
    expect(readFileSync(victim, "utf8")).toBe("precious");
  });

  it("keeps the lock 0600 and neither follows nor trusts a symlink planted at its path", () => {
    ensurePrivateDir(dir);
    const path = join(dir, "donor.lock");
    // The planted link points at a file that looks like another window's fresh lock.
    writeFileSync(victim, JSON.stringify({ pid: process.pid, owner: "intruder", beatAt: Date.now() }));
    symlinkSync(victim, path);
    const lock = new MachineLock({ path, owner: "this-window" });
    expect(lock.holder()).toBeUndefined();
    expect(lock.tryAcquire()).toBe(true);
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(mode(path)).toBe(0o600);
    expect(readFileSync(victim, "utf8")).toContain('"owner":"intruder"');
    lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it("keeps the activity stamp 0600 and never reads or writes it through a symlink", () => {
    ensurePrivateDir(dir);
    const path = join(dir, "activity");
    writeFileSync(victim, "4102444800000"); // a stamp far in the future: "the user is always active"
    symlinkSync(victim, path);
    const activity = new SharedActivity(path);
    expect(activity.latest()).toBe(0);
    activity.stamp(1_000_000);
    expect(readFileSync(victim, "utf8")).toBe("4102444800000");
    rmSync(path);
    new SharedActivity(path).stamp(2_000_000);
    expect(mode(path)).toBe(0o600);
    expect(new SharedActivity(path).latest()).toBe(2_000_000);
  });
});
