import { describe, expect, it } from "vitest";
import { jobRows } from "../../../extension/donorState/deriveDonorState";
import { jobLabel } from "../../../extension/worker/jobLabel";
import type { WorkerSnapshot } from "../../../extension/worker";

const running: WorkerSnapshot["running"] = [
  { jobId: "j1", type: "app.render", app: { name: "render", version: 3 }, attempt: 1, startedAt: 0, progress: 0.5 },
  { jobId: "j2", type: "demo.echo", attempt: 1, startedAt: 0, suspendedSince: 5_000 },
];

describe("app jobs in the views", () => {
  it("are named by app and pinned version; other jobs by type", () => {
    expect(jobLabel("app.render", { name: "render", version: 3 })).toBe("app.render v3");
    expect(jobLabel("demo.echo")).toBe("demo.echo");
    expect(jobRows(running).map((j) => j.type)).toEqual(["app.render v3", "demo.echo"]);
  });

  it("carry since when a job is frozen, and nothing for one that runs", () => {
    expect(jobRows(running).map((j) => j.suspendedSince)).toEqual([undefined, 5_000]);
    expect("suspendedSince" in jobRows(running)[0]).toBe(false);
  });
});
