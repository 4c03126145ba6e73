import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { APP_LIMITS, SHA256_HEX } from "../../../convex/contract";
import { HandlerError } from "../../worker/errors";

export type ModuleCacheOptions = {
  /** Where modules are kept, one file per sha256 (created if missing). */
  dir: string;
  /** Total bytes kept; least recently used modules go first. Default 512 MiB. A module in use is never evicted. */
  maxBytes?: number;
};

/** Fetches a module's bytes (the real source: the deployment's module route, with the worker key). */
export type FetchModule = () => Promise<Uint8Array>;

/** A module held for a run: its file stays until released. */
export type CachedModule = { path: string; bytes: number; release(): void };

const TEMP_MAX_AGE_MS = 60 * 60 * 1000;

/**
 * App modules on disk, downloaded once per sha256 and checked against it before they are kept. Downloads of
 * the same hash in this process share one fetch; across processes each writes its own temporary file and
 * renames it into place, so no reader ever sees a partial module.
 */
export class ModuleCache {
  private readonly maxBytes: number;
  private readonly downloads = new Map<string, Promise<void>>();
  private readonly inUse = new Map<string, number>();
  /** Files this process has checked against their hash (or written itself). */
  private readonly verified = new Set<string>();
  private ready: Promise<void> | undefined;

  constructor(private readonly options: ModuleCacheOptions) {
    this.maxBytes = options.maxBytes ?? 512 * 1024 * 1024;
  }

  pathOf(sha256: string): string {
    return join(this.options.dir, `${sha256}.wasm`);
  }

  /**
   * The module with this sha256, fetched with `fetch` unless cached. Throws a non-retryable HandlerError when
   * the fetched bytes do not match the hash (or are too big); a failing fetch's error passes through.
   */
  async acquire(sha256: string, fetch: FetchModule): Promise<CachedModule> {
    if (!SHA256_HEX.test(sha256)) throw new HandlerError(`not a sha256: ${JSON.stringify(sha256)}`, { retryable: false });
    await (this.ready ??= mkdir(this.options.dir, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      (e: unknown) => {
        this.ready = undefined;
        throw e;
      },
    ));
    this.hold(sha256);
    try {
      const path = this.pathOf(sha256);
      let info = await statOrNull(path);
      // A file this process has not checked yet may be cut short or damaged (a crash, a full disk): check it once.
      if (info && !this.verified.has(sha256) && !(await hashMatches(path, sha256))) {
        await rm(path, { force: true });
        info = null;
      }
      if (info) {
        this.verified.add(sha256);
        // The file's modification time is its last use: eviction goes by it.
        const now = new Date();
        await utimes(path, now, now).catch(() => undefined);
      } else {
        await this.download(sha256, fetch);
        info = await stat(path);
        await this.evict();
      }
      let released = false;
      return {
        path,
        bytes: info.size,
        release: () => {
          if (released) return;
          released = true;
          this.unhold(sha256);
        },
      };
    } catch (e) {
      this.unhold(sha256);
      throw e;
    }
  }

  private download(sha256: string, fetch: FetchModule): Promise<void> {
    let pending = this.downloads.get(sha256);
    if (!pending) {
      pending = this.fetchAndStore(sha256, fetch).finally(() => this.downloads.delete(sha256));
      this.downloads.set(sha256, pending);
    }
    return pending;
  }

  private async fetchAndStore(sha256: string, fetch: FetchModule): Promise<void> {
    const bytes = await fetch();
    if (bytes.length > APP_LIMITS.moduleBytesMax) {
      throw new HandlerError(`the module for ${sha256} is ${bytes.length} bytes; modules are at most ${APP_LIMITS.moduleBytesMax}`, { retryable: false });
    }
    const actual = createHash("sha256").update(bytes).digest("hex");
    if (actual !== sha256) {
      throw new HandlerError(`the downloaded module's sha256 is ${actual}, not the pinned ${sha256}; it was not run`, { retryable: false });
    }
    const temp = join(this.options.dir, `.${sha256}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    try {
      await writeFile(temp, bytes);
      await rename(temp, this.pathOf(sha256));
      this.verified.add(sha256);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** Drop least recently used modules until the cache fits, keeping those in use; clear stale temporary files. */
  private async evict(): Promise<void> {
    const entries: Array<{ sha256: string; path: string; size: number; usedAt: number }> = [];
    const now = Date.now();
    for (const name of await readdir(this.options.dir)) {
      const path = join(this.options.dir, name);
      const info = await statOrNull(path);
      if (!info) continue;
      if (name.endsWith(".tmp")) {
        // A download that died half-way (its process crashed); one in progress is younger than this.
        if (now - info.mtimeMs > TEMP_MAX_AGE_MS) await rm(path, { force: true });
        continue;
      }
      const match = /^([0-9a-f]{64})\.wasm$/.exec(name);
      if (match) entries.push({ sha256: match[1], path, size: info.size, usedAt: info.mtimeMs });
    }
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    entries.sort((a, b) => a.usedAt - b.usedAt);
    for (const entry of entries) {
      if (total <= this.maxBytes) break;
      if (this.inUse.has(entry.sha256)) continue;
      await rm(entry.path, { force: true });
      this.verified.delete(entry.sha256);
      total -= entry.size;
    }
  }

  private hold(sha256: string): void {
    this.inUse.set(sha256, (this.inUse.get(sha256) ?? 0) + 1);
  }

  private unhold(sha256: string): void {
    const n = (this.inUse.get(sha256) ?? 1) - 1;
    if (n > 0) this.inUse.set(sha256, n);
    else this.inUse.delete(sha256);
  }
}

async function hashMatches(path: string, sha256: string): Promise<boolean> {
  try {
    return createHash("sha256").update(await readFile(path)).digest("hex") === sha256;
  } catch {
    return false;
  }
}

async function statOrNull(path: string) {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}
