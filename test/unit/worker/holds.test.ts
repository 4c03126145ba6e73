import { describe, expect, it } from "vitest";
import { Holds } from "../../../extension/worker/holds";
import type { JobRun } from "../../../extension/worker/jobRun";
import { manualClock } from "./recordingFarm";

/** A stand-in for a running job: what the holds asked of it. */
function run(jobId: string, opts: { gpu?: boolean; freezable?: boolean } = {}) {
  const said: string[] = [];
  let since: number | undefined;
  const r = {
    job: { jobId, ...(opts.gpu ? { requirements: { gpu: {} } } : {}) },
    get suspendedSince() {
      return since;
    },
    suspend: () => {
      if (opts.freezable === false) return false;
      said.push("suspend");
      since = 1;
      return true;
    },
    thaw: () => {
      said.push("thaw");
      since = undefined;
    },
    abort: (why: string) => void said.push(`abort ${why}`),
  };
  return { run: r as unknown as JobRun, said };
}

function holdsOver(runs: JobRun[], freeMB = () => 0) {
  const clock = manualClock();
  const held: string[][] = [];
  let back = 0;
  const holds = new Holds({
    clock,
    runs: () => runs,
    freeMemoryMB: freeMB,
    memoryCheckEveryMs: 1_000,
    heldChanged: (h) => void held.push(h),
    memoryBack: () => void back++,
  });
  return { holds, clock, held, back: () => back };
}

describe("Holds, one transition per test", () => {
  it("suspend freezes every job and gives back one that cannot be frozen; says which are frozen", () => {
    const a = run("a");
    const b = run("b", { freezable: false });
    const { holds, held } = holdsOver([a.run, b.run]);
    holds.suspend();
    expect(a.said).toEqual(["suspend"]);
    expect(b.said).toEqual(["abort yield"]);
    expect(holds.suspended).toBe(true);
    expect(held).toEqual([["a"]]);
  });

  it("thaw after suspend thaws every job, except GPU jobs while the GPU is held", () => {
    const a = run("a");
    const g = run("g", { gpu: true });
    const { holds } = holdsOver([a.run, g.run]);
    holds.suspend();
    holds.holdGpu(true);
    holds.thaw();
    expect(a.said).toEqual(["suspend", "thaw"]);
    expect(g.said).toEqual(["suspend", "suspend"]);
    expect(holds.suspended).toBe(false);
  });

  it("a GPU hold freezes GPU jobs only; releasing it thaws them unless all are held", () => {
    const a = run("a");
    const g = run("g", { gpu: true });
    const { holds } = holdsOver([a.run, g.run]);
    holds.holdGpu(true);
    expect(a.said).toEqual([]);
    expect(g.said).toEqual(["suspend"]);
    expect(holds.mustYield(g.run.job)).toBe(true);
    expect(holds.mustYield(a.run.job)).toBe(false);
    holds.holdGpu(false);
    expect(g.said).toEqual(["suspend", "thaw"]);
  });

  it("the same hold twice says nothing new", () => {
    const a = run("a");
    const { holds, held } = holdsOver([a.run]);
    holds.suspend();
    holds.suspend();
    expect(held).toEqual([["a"]]);
  });

  it("waiting for memory: looks again on its own clock, and says when the memory is back", () => {
    let free = 100;
    const { holds, clock, back } = holdsOver([], () => free);
    holds.waitForMemory(500);
    expect(holds.memoryState).toMatchObject({ kind: "waiting", neededMB: 500 });
    clock.advance(1_000);
    expect(holds.memoryHeld).toBe(true);
    expect(back()).toBe(0);
    free = 600;
    clock.advance(1_000);
    expect(holds.memoryHeld).toBe(false);
    expect(back()).toBe(1);
    expect(clock.pending).toEqual([]);
  });

  it("a second job short of memory lowers what is waited for; one timer only", () => {
    const { holds, clock } = holdsOver([]);
    holds.waitForMemory(500);
    holds.waitForMemory(300);
    expect(holds.memoryState).toMatchObject({ kind: "waiting", neededMB: 300 });
    expect(clock.pending).toHaveLength(1);
  });

  it("reset (the engine stopped) clears the memory timer and the owner's hold", () => {
    const { holds, clock } = holdsOver([]);
    holds.suspend();
    holds.waitForMemory(500);
    holds.reset();
    expect(clock.pending).toEqual([]);
    expect(holds.suspended).toBe(false);
    expect(holds.memoryHeld).toBe(false);
  });
});
