import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MachineLock } from "../../../extension/policy/machineLock";

describe("MachineLock", () => {
  let dir: string;
  let path: string;
  let now = 0;
  const alive = new Set<number>([process.pid]);
  const lock = (owner: string) => new MachineLock({ path, owner, staleMs: 30_000, now: () => now, isAlive: (pid) => alive.has(pid) });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "farmhand-lock-"));
    path = join(dir, "donor.lock");
    now = 1_000_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("lets exactly one window hold it", () => {
    const a = lock("window-a");
    const b = lock("window-b");
    expect(a.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    expect(b.holder()?.owner).toBe("window-a");
    expect(a.tryAcquire()).toBe(true); // refreshing keeps it
  });

  it("passes to another window once released", () => {
    const a = lock("window-a");
    const b = lock("window-b");
    a.tryAcquire();
    a.release();
    expect(existsSync(path)).toBe(false);
    expect(b.tryAcquire()).toBe(true);
  });

  it("is taken over from a crashed window after staleMs without a refresh", () => {
    const a = lock("window-a");
    const b = lock("window-b");
    a.tryAcquire();
    now += 29_000;
    expect(b.tryAcquire()).toBe(false);
    now += 2_000;
    expect(b.tryAcquire()).toBe(true);
    expect(a.tryAcquire()).toBe(false); // the old owner finds it lost the lock
  });

  it("is taken over at once when the owning process is gone", () => {
    writeFileSync(path, JSON.stringify({ pid: 999_999_999, owner: "dead-window", beatAt: now }));
    expect(lock("window-b").tryAcquire()).toBe(true);
  });

  it("treats a torn or foreign lock file as free", () => {
    writeFileSync(path, "{not json");
    expect(lock("window-a").tryAcquire()).toBe(true);
  });

  it("does not delete a lock that someone else took over", () => {
    const a = lock("window-a");
    const b = lock("window-b");
    a.tryAcquire();
    now += 60_000;
    b.tryAcquire();
    a.release();
    expect(b.holder()?.owner).toBe("window-b");
  });
});
