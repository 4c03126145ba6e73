import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModuleCache } from "../../../extension/handlers/apps/moduleCache";
import { sha256 } from "./harness";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function newCache(maxBytes?: number) {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-cache-"));
  dirs.push(dir);
  return { dir, cache: new ModuleCache({ dir, maxBytes }) };
}

const moduleOf = (n: number, size = 100) => Buffer.alloc(size, n);
/** A fetch that counts its calls and answers after the test lets it. */
function slowFetch(bytes: Uint8Array) {
  let calls = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    fetch: async () => {
      calls++;
      await gate;
      return bytes;
    },
    release,
    calls: () => calls,
  };
}

describe("ModuleCache", () => {
  it("downloads a module once per sha256 and serves it from disk afterwards", async () => {
    const { cache } = newCache();
    const bytes = moduleOf(1);
    let calls = 0;
    const fetch = () => {
      calls++;
      return Promise.resolve(bytes);
    };
    const first = await cache.acquire(sha256(bytes), fetch);
    first.release();
    const second = await cache.acquire(sha256(bytes), fetch);
    second.release();
    expect(calls).toBe(1);
    expect(second.path).toBe(first.path);
    expect(readFileSync(first.path)).toEqual(bytes);
    // A new cache over the same folder (the next session) finds it too.
    const again = new ModuleCache({ dir: join(first.path, "..") });
    await again.acquire(sha256(bytes), fetch);
    expect(calls).toBe(1);
  });

  it("shares one download among concurrent requests for the same hash", async () => {
    const { cache } = newCache();
    const bytes = moduleOf(2);
    const slow = slowFetch(bytes);
    const all = Promise.all([1, 2, 3].map(() => cache.acquire(sha256(bytes), slow.fetch)));
    await new Promise((r) => setTimeout(r, 20));
    slow.release();
    const held = await all;
    expect(slow.calls()).toBe(1);
    expect(new Set(held.map((h) => h.path)).size).toBe(1);
  });

  it("refuses bytes that do not match the pinned sha256, not retryable, and keeps nothing", async () => {
    const { dir, cache } = newCache();
    const wanted = sha256(moduleOf(3));
    await expect(cache.acquire(wanted, () => Promise.resolve(moduleOf(4)))).rejects.toMatchObject({
      message: expect.stringContaining(`not the pinned ${wanted}`) as unknown,
      retryable: false,
    });
    expect(readdirSync(dir)).toEqual([]);
    // The next attempt fetches again (and may succeed).
    const held = await cache.acquire(wanted, () => Promise.resolve(moduleOf(3)));
    expect(readFileSync(held.path)).toEqual(moduleOf(3));
  });

  it("lets a failing fetch's error through and caches nothing", async () => {
    const { dir, cache } = newCache();
    await expect(cache.acquire(sha256(moduleOf(5)), async () => Promise.reject(new Error("network down")))).rejects.toThrow("network down");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a malformed hash before fetching", async () => {
    const { cache } = newCache();
    await expect(cache.acquire("../../etc/passwd", () => Promise.resolve(moduleOf(1)))).rejects.toMatchObject({ retryable: false });
  });

  it("evicts the least recently used modules past the size cap, never one in use", async () => {
    const { cache } = newCache(250);
    const [a, b, c] = [moduleOf(10), moduleOf(11), moduleOf(12)];
    const use = async (bytes: Uint8Array, keep = false) => {
      const held = await cache.acquire(sha256(bytes), () => Promise.resolve(bytes));
      if (!keep) held.release();
      // Distinct use times for the LRU order (file times have millisecond precision or better).
      await new Promise((r) => setTimeout(r, 15));
      return held;
    };
    const heldA = await use(a, true);
    await use(b);
    await use(a);
    // 300 bytes > 250: b is least recently used and goes; a is newer (and in use).
    await use(c);
    expect(existsSync(cache.pathOf(sha256(a)))).toBe(true);
    expect(existsSync(cache.pathOf(sha256(b)))).toBe(false);
    expect(existsSync(cache.pathOf(sha256(c)))).toBe(true);
    // Now a is the oldest, but in use: adding b again evicts c instead.
    await new Promise((r) => setTimeout(r, 15));
    await use(b);
    expect(existsSync(cache.pathOf(sha256(a)))).toBe(true);
    expect(existsSync(cache.pathOf(sha256(c)))).toBe(false);
    heldA.release();
  });

  it("checks a file it finds once, and fetches again over one that was cut short", async () => {
    const { cache } = newCache();
    const bytes = moduleOf(30, 4000);
    writeFileSync(cache.pathOf(sha256(bytes)), bytes.subarray(0, 1000));
    let calls = 0;
    const held = await cache.acquire(sha256(bytes), () => {
      calls++;
      return Promise.resolve(bytes);
    });
    expect(calls).toBe(1);
    expect(readFileSync(held.path)).toEqual(bytes);
  });

  it("never shows a partial file: a download in progress is a temporary file, and stale ones are cleared", async () => {
    const { dir, cache } = newCache();
    const bytes = moduleOf(20, 5000);
    const slow = slowFetch(bytes);
    const stale = join(dir, `.${"f".repeat(64)}.123.abcd.tmp`);
    writeFileSync(stale, "half a module");
    utimesSync(stale, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    const pending = cache.acquire(sha256(bytes), slow.fetch);
    await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(cache.pathOf(sha256(bytes)))).toBe(false);
    slow.release();
    const held = await pending;
    expect(readFileSync(held.path)).toEqual(bytes);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
