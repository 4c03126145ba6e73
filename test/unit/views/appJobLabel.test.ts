import { describe, expect, it } from "vitest";
import { buildSnapshot, type SnapshotParts } from "../../../extension/views/panelSnapshot";
import { jobLabel } from "../../../extension/worker/jobLabel";

const engine: NonNullable<SnapshotParts["engine"]> = {
  state: "running",
  connected: true,
  concurrency: 2,
  capabilities: ["apps", "demo.echo"],
  running: [
    { jobId: "j1", type: "app.render", app: { name: "render", version: 3 }, attempt: 1, startedAt: 0, progress: 0.5 },
    { jobId: "j2", type: "demo.echo", attempt: 1, startedAt: 0 },
  ],
  totals: { succeeded: 0, failed: 0, canceled: 0, released: 0, lost: 0 },
  suspended: false,
};

describe("app jobs in the views", () => {
  it("are named by app and pinned version; other jobs by type", () => {
    expect(jobLabel("app.render", { name: "render", version: 3 })).toBe("app.render v3");
    expect(jobLabel("demo.echo")).toBe("demo.echo");
    const s = buildSnapshot({
      joined: true,
      wanted: true,
      farmUrl: "https://farm.example",
      decision: { donate: true },
      policy: { preset: "medium", concurrency: 2, idleMinutes: 5, otherCpuPercent: 50, problems: [] },
      engine,
      engineView: { connected: true, running: 2 },
      contribution: { succeeded: 0, failed: 0, canceled: 0, busyMs: 0 },
      overview: undefined,
      dead: [],
      farmError: undefined,
      now: 0,
    });
    expect(s.jobs.map((j) => j.type)).toEqual(["app.render v3", "demo.echo"]);
  });
});
