// Would a deployment's OCC have retried this mutation? The loopback server runs one transaction at a time, so
// nothing ever conflicts here; the audit asks instead whether a write committed shortly before the mutation
// ran (within the window) by a caller that could not have seen it yet falls into the mutation's read set.
import type { ReadSet } from "./readSet";
import type { WriteRecord } from "./writes";

export type Commit = {
  /** Commits with writes are numbered 1, 2, …; a caller that has seen commit n has seen every earlier one. */
  seq: number;
  /** performance.now() when it committed. */
  at: number;
  caller: string;
  writes: WriteRecord[];
};

export type AuditedMutation = {
  startedAt: number;
  caller: string;
  /** The newest commit the caller had seen when it sent the mutation. */
  seenSeq: number;
  reads: ReadSet;
};

export class ConflictAudit {
  private recent: Commit[] = [];

  constructor(readonly windowMs: number) {}

  wouldConflict(mutation: AuditedMutation): boolean {
    const since = mutation.startedAt - this.windowMs;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const commit = this.recent[i];
      if (commit.at < since) break;
      if (commit.caller === mutation.caller || commit.seq <= mutation.seenSeq) continue;
      if (commit.writes.some((write) => mutation.reads.touches(write))) return true;
    }
    return false;
  }

  /**
   * Transactions run one at a time, so every later mutation starts after `commit.at`: commits older than the
   * window by then can never count again.
   */
  record(commit: Commit): void {
    const cutoff = commit.at - this.windowMs;
    let stale = 0;
    while (stale < this.recent.length && this.recent[stale].at < cutoff) stale++;
    if (stale > 0) this.recent = this.recent.slice(stale);
    this.recent.push(commit);
  }
}
