import { renameSync, unlinkSync } from "node:fs";
import { readPrivateFile, writePrivateFile } from "./privateFiles";

/**
 * One donor per machine across VS Code windows: a small lock file that the owning window refreshes.
 * A window that crashed stops refreshing, and after `staleMs` (or as soon as its process is gone) another
 * window may take the lock over — so a crash can never keep a machine from donating for long.
 * The file lives in the user's private state folder (privateFiles.ts) and is never read or written through a
 * symlink: a link planted at its path counts as no lock, and the next write replaces the link, not its target.
 */
export type LockOwner = { pid: number; owner: string; beatAt: number };

export type MachineLockOptions = {
  path: string;
  owner: string;
  staleMs?: number;
  now?: () => number;
  isAlive?: (pid: number) => boolean;
};

export class MachineLock {
  private readonly staleMs: number;
  private readonly now: () => number;
  private readonly isAlive: (pid: number) => boolean;
  private held = false;

  constructor(private readonly options: MachineLockOptions) {
    this.staleMs = options.staleMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.isAlive = options.isAlive ?? processIsAlive;
  }

  /** Try to become (or stay) the machine's donor; call about every staleMs/3 while donating. */
  tryAcquire(): boolean {
    const current = this.read();
    if (current && current.owner !== this.options.owner && !this.isStale(current)) {
      this.held = false;
      return false;
    }
    this.write();
    // Two windows may take a stale lock at the same moment; the last rename wins, so check who it was.
    this.held = this.read()?.owner === this.options.owner;
    return this.held;
  }

  /** Who holds the lock now, if anyone live does. */
  holder(): LockOwner | undefined {
    const current = this.read();
    return current && !this.isStale(current) ? current : undefined;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    if (this.read()?.owner !== this.options.owner) return;
    try {
      unlinkSync(this.options.path);
    } catch {
      // Already gone: nothing to release.
    }
  }

  private isStale(lock: LockOwner): boolean {
    return this.now() - lock.beatAt > this.staleMs || !this.isAlive(lock.pid);
  }

  private read(): LockOwner | undefined {
    try {
      const parsed = JSON.parse(readPrivateFile(this.options.path) ?? "") as Partial<LockOwner>;
      if (typeof parsed.pid === "number" && typeof parsed.owner === "string" && typeof parsed.beatAt === "number") {
        return parsed as LockOwner;
      }
    } catch {
      // Missing, torn or a symlink: treat as unlocked.
    }
    return undefined;
  }

  private write(): void {
    const body: LockOwner = { pid: process.pid, owner: this.options.owner, beatAt: this.now() };
    const temp = `${this.options.path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writePrivateFile(temp, JSON.stringify(body), { exclusive: true });
    renameSync(temp, this.options.path); // rename replaces a symlink at the path; it never writes through it
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
