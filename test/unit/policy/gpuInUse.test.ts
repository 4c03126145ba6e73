import { afterEach, describe, expect, it, vi } from "vitest";
import { GpuGuard } from "../../../extension/policy/gpuGuard";
import { COMPUTE_APPS_QUERY, isOurs, parseComputeApps, parseUtilization, readGpuUse, type GpuUse } from "../../../extension/policy/gpuInUse";

// Recorded `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader` outputs.
const TWO_APPS = "4242, 1536 MiB\n9001, 102 MiB\n";
const WDDM = "5120, [N/A]\n";
const NONE = "";

describe("nvidia-smi outputs", () => {
  it("reads compute apps with their memory, or without where the driver hides it", () => {
    expect(parseComputeApps(TWO_APPS)).toEqual([
      { pid: 4242, usedMiB: 1536 },
      { pid: 9001, usedMiB: 102 },
    ]);
    expect(parseComputeApps(WDDM)).toEqual([{ pid: 5120 }]);
    expect(parseComputeApps(NONE)).toEqual([]);
    expect(parseComputeApps("No devices were found\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")).toEqual([]);
  });

  it("reads the busiest GPU's utilization; garbage is no reading", () => {
    expect(parseUtilization("3\n87\n")).toBe(87);
    expect(parseUtilization("[N/A]\n")).toBeUndefined();
    expect(parseUtilization("")).toBeUndefined();
  });

  it("knows our own jobs' processes by their parents", () => {
    const parents: Record<number, number> = { 300: 200, 200: 100, 100: 1, 400: 1 };
    const parent = (pid: number) => parents[pid];
    expect(isOurs(300, 100, parent)).toBe(true);
    expect(isOurs(100, 100, parent)).toBe(true);
    expect(isOurs(400, 100, parent)).toBe(false);
    expect(isOurs(999, 100, parent)).toBe(false);
  });
});

describe("is someone else using the GPU?", () => {
  const parents: Record<number, number> = { 4242: 1, 9001: 1, 700: 100 };
  const parent = (pid: number) => parents[pid];
  const answers = (apps: string | undefined, utilization = "0\n") => (args: string[]) => Promise.resolve(args === COMPUTE_APPS_QUERY ? apps : utilization);

  it("another program's compute context with real memory: busy, naming it; a bare context is not", async () => {
    expect(await readGpuUse(true, { run: answers(TWO_APPS), self: 100, parent })).toEqual({ busy: true, why: "another program uses the GPU (pid 4242)" });
    expect(await readGpuUse(true, { run: answers("9001, 102 MiB\n"), self: 100, parent })).toEqual({ busy: false });
  });

  it("our own job's process is not someone else", async () => {
    expect(await readGpuUse(true, { run: answers("700, 4000 MiB\n"), self: 100, parent })).toEqual({ busy: false });
  });

  it("a pid it cannot see counts only while none of our GPU jobs runs (it may be ours, seen from a container's host)", async () => {
    expect(await readGpuUse(true, { run: answers(WDDM), self: 100, parent })).toEqual({ busy: false });
    expect(await readGpuUse(false, { run: answers(WDDM), self: 100, parent })).toMatchObject({ busy: true });
  });

  it("graphics load (no compute app) counts only while none of our GPU jobs runs", async () => {
    expect(await readGpuUse(false, { run: answers(NONE, "64\n"), self: 100, parent })).toEqual({ busy: true, why: "the GPU is 64 % busy with other programs" });
    expect(await readGpuUse(true, { run: answers(NONE, "64\n"), self: 100, parent })).toEqual({ busy: false });
    expect(await readGpuUse(false, { run: answers(NONE, "12\n"), self: 100, parent })).toEqual({ busy: false });
  });

  it("no answer without nvidia-smi (missing, no driver, permission denied)", async () => {
    expect(await readGpuUse(false, { run: () => Promise.resolve(undefined) })).toBeUndefined();
  });
});

describe("the GPU guard", () => {
  afterEach(() => vi.useRealTimers());

  it("asks only while GPU jobs run; freezes them while the GPU is busy and lets them go on after", async () => {
    vi.useFakeTimers();
    const engine = { gpuJobs: 0, holds: [] as boolean[], holdGpuJobs(hold: boolean) { this.holds.push(hold); } };
    const uses: GpuUse[] = [{ busy: true, why: "another program uses the GPU (pid 4242)" }, { busy: true, why: "x" }, { busy: false }];
    const asked: boolean[] = [];
    const log: string[] = [];
    const guard = new GpuGuard(engine, (l) => log.push(l), (ours) => (asked.push(ours), Promise.resolve(uses.shift() ?? { busy: false })), 1_000);
    guard.start();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(asked).toEqual([]); // no GPU job: nvidia-smi is not run
    engine.gpuJobs = 1;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(engine.holds).toEqual([true]);
    expect(log).toEqual(["GPU jobs frozen: another program uses the GPU (pid 4242)"]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(engine.holds).toEqual([true, false]);
    expect(asked).toEqual([true, false, false]); // while held, the load is not ours
    guard.dispose();
  });

  it("stops asking where nvidia-smi gives no answer", async () => {
    vi.useFakeTimers();
    let asked = 0;
    const guard = new GpuGuard({ gpuJobs: 1, holdGpuJobs: () => undefined }, () => undefined, () => (asked++, Promise.resolve(undefined)), 1_000);
    guard.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toBe(1);
    guard.dispose();
  });
});
