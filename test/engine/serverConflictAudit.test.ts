// The loopback server's conflict audit and stats counters, on their own.
import { convexToJson } from "convex/values";
import { describe, expect, it } from "vitest";
import { ConflictAudit, type Commit } from "../server/instruments/conflictAudit";
import { IndexCatalog } from "../server/instruments/indexCatalog";
import { ReadSet } from "../server/instruments/readSet";
import { StatsCounter } from "../server/instruments/stats";
import type { WriteRecord } from "../server/instruments/writes";

const catalog = new IndexCatalog();
catalog.declare("items", [{ name: "by_group_rank", fields: ["group", "rank"] }]);

let nextId = 20_000;
const write = (group: string, rank: number): WriteRecord => {
  const id = `${nextId++}items`;
  return { table: "items", id, before: null, after: { _id: id, _creationTime: nextId, group, rank } };
};

/** A mutation that read the whole of one group. */
function readerOf(group: string, startedAt: number, caller = "session:b", seenSeq = 0) {
  const reads = new ReadSet(catalog);
  reads.startStream(1, { source: { type: "IndexRange", indexName: "items.by_group_rank", range: [{ type: "Eq", fieldPath: "group", value: group }] }, operators: [] });
  reads.streamNext(1, JSON.stringify(convexToJson({ value: null, done: true })));
  return { startedAt, caller, seenSeq, reads };
}

const commit = (seq: number, at: number, caller: string, ...writes: WriteRecord[]): Commit => ({ seq, at, caller, writes });

describe("conflict audit", () => {
  it("counts a write by another caller, committed within the window and not yet seen, that falls into the read set", () => {
    const audit = new ConflictAudit(20);
    audit.record(commit(1, 1_000, "session:a", write("g", 1)));
    expect(audit.wouldConflict(readerOf("g", 1_010))).toBe(true);
  });

  it("does not count a write outside the read set, by the same caller, already seen, or older than the window", () => {
    const audit = new ConflictAudit(20);
    audit.record(commit(1, 1_000, "session:a", write("g", 1)));
    expect(audit.wouldConflict(readerOf("other group", 1_010))).toBe(false);
    expect(audit.wouldConflict(readerOf("g", 1_010, "session:a"))).toBe(false);
    expect(audit.wouldConflict(readerOf("g", 1_010, "session:b", 1))).toBe(false);
    expect(audit.wouldConflict(readerOf("g", 1_021))).toBe(false);
    expect(audit.wouldConflict(readerOf("g", 1_020))).toBe(true);
  });

  it("looks past newer harmless commits to an older conflicting one, and forgets commits once no mutation can reach them", () => {
    const audit = new ConflictAudit(20);
    audit.record(commit(1, 1_000, "session:a", write("g", 1)));
    audit.record(commit(2, 1_005, "session:c", write("h", 1)));
    expect(audit.wouldConflict(readerOf("g", 1_010))).toBe(true);
    audit.record(commit(3, 1_100, "session:c", write("h", 2)));
    // A reader starting at 1_010 again cannot happen any more (transactions run in order): commit 1 is gone.
    expect(audit.wouldConflict(readerOf("g", 1_010))).toBe(false);
  });
});

describe("stats counters", () => {
  it("counts per function and pushes in all, sorted by name, and resets to zero", () => {
    const stats = new StatsCounter(20);
    stats.call("workers:claim");
    stats.call("workers:claim");
    stats.conflict("workers:claim");
    stats.push("workers:doorbell");
    stats.push("workers:doorbell");
    stats.call("http:POST /api/jobs");
    const snapshot = stats.snapshot();
    expect(snapshot).toEqual({
      functions: {
        "http:POST /api/jobs": { calls: 1, conflicts: 0, pushes: 0 },
        "workers:claim": { calls: 2, conflicts: 1, pushes: 0 },
        "workers:doorbell": { calls: 0, conflicts: 0, pushes: 2 },
      },
      pushes: 2,
      conflictWindowMs: 20,
    });
    expect(Object.keys(snapshot.functions)).toEqual(["http:POST /api/jobs", "workers:claim", "workers:doorbell"]);
    // A snapshot is a copy.
    snapshot.functions["workers:claim"].calls = 99;
    expect(stats.snapshot().functions["workers:claim"].calls).toBe(2);
    expect(stats.reset()).toEqual({ functions: {}, pushes: 0, conflictWindowMs: 20 });
    expect(stats.snapshot()).toEqual({ functions: {}, pushes: 0, conflictWindowMs: 20 });
  });
});
