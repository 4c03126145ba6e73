import { readPrivateFile, writePrivateFile } from "./privateFiles";

/**
 * The user's last keyboard/mouse activity in ANY VS Code window on this machine, through a tiny file that each
 * window stamps (at most every `everyMs`) and the donating window reads. Without it, a window in the background
 * would see "idle" while the user types in another one. Unreadable or unwritable file: each window falls back
 * to its own activity. Never read or written through a symlink.
 */
export class SharedActivity {
  private lastWritten = 0;

  constructor(
    private readonly path: string,
    private readonly everyMs = 10_000,
  ) {}

  /** This window saw activity at `now`. */
  stamp(now: number): void {
    if (now - this.lastWritten < this.everyMs) return;
    this.lastWritten = now;
    try {
      writePrivateFile(this.path, String(now));
    } catch {
      // Not shared this time; this window still knows its own activity.
    }
  }

  /** The latest activity any window stamped, or 0 when none is known. */
  latest(): number {
    try {
      const value = Number(readPrivateFile(this.path));
      return Number.isFinite(value) ? value : 0;
    } catch {
      return 0;
    }
  }
}
