import { describe, expect, it } from "vitest";
import type { Id } from "../../../convex/_generated/dataModel";
import { buildSnapshot, perMinute, type SnapshotParts } from "../../../extension/views/panelSnapshot";

const NOW = 1_800_000_000_000;
const parts: SnapshotParts = {
  joined: true,
  wanted: true,
  farmUrl: "https://farm.example",
  decision: { donate: true },
  policy: { preset: "medium", concurrency: 1, idleMinutes: 5, otherCpuPercent: 50, problems: [] },
  engine: undefined,
  engineView: { connected: true, running: 0 },
  contribution: { succeeded: 2, failed: 1, canceled: 0, busyMs: 1234 },
  overview: {
    counts: { pending: 3, running: 1, succeeded: 10, canceled: 0, dead: 1 },
    lanes: [],
    workers: [
      { workerId: "w1" as Id<"workers">, name: "box", machineId: "m1", keyPrefix: "fh_w_abcd", online: true, revoked: false, lastSeenAt: NOW, maxConcurrentJobs: 2, isMe: true },
    ],
    workersOnline: 1,
    throughput: [{ minuteStart: NOW - 120_000, finished: 4, failed: 0 }],
    finishedLastHour: 4,
    deadLetters: 1,
    deadLetterList: [],
    canManage: false,
    refreshedAt: NOW,
    onlineWindowMs: 360_000,
    now: NOW,
  },
  dead: [{ jobId: "j1" as Id<"jobs">, type: "demo.echo", attempt: 3, maxAttempts: 3, error: "boom", requiredCapabilities: [] }],
  farmError: undefined,
  now: NOW,
};

describe("panel snapshot", () => {
  it("combines the donor, the engine and the farm", () => {
    const s = buildSnapshot(parts);
    expect(s.statusText).toBe("waiting for work");
    expect(s.contribution).toEqual({ succeeded: 2, failed: 1, canceled: 0, busyMs: 1234 });
    expect(s.farm?.dead).toEqual([{ jobId: "j1", type: "demo.echo", error: "boom", attempts: "3/3" }]);
    expect(s.farm?.throughput).toHaveLength(60);
    expect(s.farm?.throughput.reduce((a, b) => a + b, 0)).toBe(4);
  });

  it("offers Resume, not Stop, when the engine paused itself", () => {
    expect(buildSnapshot(parts).toggle).toBe("stop");
    const autoPaused = buildSnapshot({ ...parts, engineView: { connected: true, running: 0, pausedReason: "auto-paused after 5 failed jobs in a row" } });
    expect(autoPaused.status).toEqual({ kind: "paused", reason: "auto-paused after 5 failed jobs in a row" });
    expect(autoPaused.toggle).toBe("resume");
  });

  it("shows no farm data when not joined", () => {
    const s = buildSnapshot({ ...parts, joined: false, farmError: { kind: "unreachable", message: "boom" } });
    expect(s.farm).toBeUndefined();
    expect(s.farmError).toBeUndefined();
    expect(s.status).toEqual({ kind: "notJoined" });
  });

  it("lays the throughput out per minute, oldest first, dropping what is older than an hour", () => {
    const minute = 60_000;
    const series = perMinute(
      [
        { minuteStart: NOW - 61 * minute, finished: 9 }, // more than an hour ago
        { minuteStart: NOW - 59 * minute, finished: 2 },
        { minuteStart: NOW, finished: 5 },
      ],
      NOW,
    );
    expect(series[0]).toBe(2);
    expect(series[59]).toBe(5);
    expect(series.reduce((a, b) => a + b, 0)).toBe(7);
  });
});
