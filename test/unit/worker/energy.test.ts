import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, type CpuInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { energyGauge, estimatedGauge, findEnergyCounter, machineBusyMs, PackageEnergy, type EnergyCounter } from "../../../extension/worker/energy";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { JobRun, type JobRunOptions } from "../../../extension/worker/jobRun";
import { recordingFarm } from "./recordingFarm";

/** A fake /sys/class: files by path under it. */
const roots: string[] = [];
function sysClass(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "farmhand-sysfs-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text + "\n");
  }
  return root;
}
afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

/** os.cpus() as two cores whose busy time adds up to `busyMs`. */
const cpusBusy = (busyMs: number): CpuInfo[] => [
  { model: "t", speed: 1, times: { user: busyMs / 2, nice: 0, sys: 0, idle: 1_000, irq: 0 } },
  { model: "t", speed: 1, times: { user: busyMs / 4, nice: busyMs / 4, sys: 0, idle: 1_000, irq: 0 } },
];

describe("the CPU package's energy counter (RAPL, through a fake sysfs root)", () => {
  it("finds powercap's intel-rapl:0 with its wrap-around range; else an amd_energy socket counter; else none", async () => {
    const rapl = await findEnergyCounter(sysClass({ "powercap/intel-rapl:0/energy_uj": "123456789", "powercap/intel-rapl:0/max_energy_range_uj": "262143328850" }));
    expect(rapl).toMatchObject({ name: "RAPL (intel-rapl:0)", wrapsAtUj: 262143328850 });
    expect(await rapl!.read()).toBe(123456789);
    const amd = await findEnergyCounter(
      sysClass({ "hwmon/hwmon3/name": "amd_energy", "hwmon/hwmon3/energy1_label": "Ecore000", "hwmon/hwmon3/energy1_input": "5", "hwmon/hwmon3/energy17_label": "Esocket0", "hwmon/hwmon3/energy17_input": "99000000" }),
    );
    expect(amd?.name).toBe("amd_energy (socket 0)");
    expect(await amd!.read()).toBe(99_000_000);
    expect(await findEnergyCounter(sysClass({ "hwmon/hwmon0/name": "coretemp", "powercap/intel-rapl:0/energy_uj": "not a number" }))).toBeUndefined();
    expect(await findEnergyCounter("/nonexistent")).toBeUndefined();
  });

  it("adds the counter's steps across a wrap-around; a counter that goes back without a known range counts nothing for that step", async () => {
    const readings = [100e6, 250e6, 262_000e6, 10e6, 30e6];
    const counter: EnergyCounter = { name: "t", read: () => Promise.resolve(readings.shift()), wrapsAtUj: 262_143e6 };
    const meter = new PackageEnergy(counter);
    expect(await meter.sample()).toBe(0);
    expect(await meter.sample()).toBe(150);
    expect(await meter.sample()).toBe(262_000 - 100);
    expect(await meter.sample()).toBeCloseTo(262_143 - 100 + 10);
    const values = [50e6, 20e6, 25e6];
    const resetMeter = new PackageEnergy({ name: "t", read: () => Promise.resolve(values.shift()) });
    await resetMeter.sample();
    expect(await resetMeter.sample()).toBe(0);
    expect(await resetMeter.sample()).toBe(5);
  });

  it("a job's energy is the package's energy over its life times its share of the machine's CPU time", async () => {
    const root = sysClass({ "powercap/intel-rapl:0/energy_uj": "100000000", "powercap/intel-rapl:0/max_energy_range_uj": "262143328850" });
    let busy = 10_000;
    const gauge = await energyGauge({ wattsPerCore: () => 10, sysClass: root, readCpus: () => cpusBusy(busy), platform: "linux" });
    expect(gauge).toMatchObject({ method: "measured", source: "RAPL (intel-rapl:0)" });
    const mark = await gauge.begin();
    writeFileSync(join(root, "powercap/intel-rapl:0/energy_uj"), "400000000\n"); // 300 J later
    busy += 60_000; // the machine spent 60 s of CPU meanwhile, the job 15 s of it
    expect(await gauge.end(mark, 15_000)).toBe(75);
    // a job whose CPU time is not known reports nothing
    expect(await gauge.end(await gauge.begin(), undefined)).toBeUndefined();
    gauge.dispose();
  });

  it("where the counter cannot be read (another OS, or root-only), CPU time × watts per core, labelled an estimate", async () => {
    const elsewhere = await energyGauge({ wattsPerCore: () => 10, sysClass: sysClass({ "powercap/intel-rapl:0/energy_uj": "100" }), platform: "darwin" });
    expect(elsewhere.method).toBe("estimated");
    const linuxWithout = await energyGauge({ wattsPerCore: () => 12.5, sysClass: "/nonexistent", platform: "linux" });
    expect(linuxWithout).toMatchObject({ method: "estimated", source: "an estimate at 12.5 W per busy core" });
    expect(await linuxWithout.end(await linuxWithout.begin(), 30_000)).toBe(375);
    expect(await estimatedGauge({ wattsPerCore: () => 10 }).end({ busyMs: 0 }, undefined)).toBeUndefined();
  });

  it("the machine's CPU time adds every core's user, nice, system and interrupt time", () => {
    expect(machineBusyMs(() => cpusBusy(8_000))).toBe(8_000);
  });
});

describe("a job's end carries its energy", () => {
  const OPTIONS: JobRunOptions = { jobTimeoutMs: 5_000, graceMs: 50, maxResultBytes: 1_000, maxChunkBytes: 8_000, outputFlushMs: 10, suspendLimitMs: 60_000 };
  const JOB = { jobId: "j1", leaseId: "l1", type: "test.job", payload: {}, attempt: 1, leaseMs: 60_000, leaseExpiresAt: Date.now() + 60_000 } as unknown as ClaimedJob;
  const callbacks = { onProgress: () => undefined, onOutput: () => undefined, onError: () => undefined, onKeyError: () => undefined };

  it("complete and fail send energyJ from the gauge with the CPU time; without a gauge or CPU time, none", async () => {
    const ends: Array<{ call: string; energyJ?: number }> = [];
    const { client } = recordingFarm({
      complete: ({ energyJ }) => (ends.push({ call: "complete", energyJ }), { status: "succeeded" }),
      fail: ({ energyJ }) => (ends.push({ call: "fail", energyJ }), { status: "dead", availableAt: undefined }),
    });
    const energy = estimatedGauge({ wattsPerCore: () => 8 });
    const withCpu = { type: "test.job", run: (_p: unknown, ctx: { onCpuMs?(ms: number): void }) => (ctx.onCpuMs?.(2_500), Promise.resolve("ok")) };
    const failing = { type: "test.job", run: (_p: unknown, ctx: { onCpuMs?(ms: number): void }) => (ctx.onCpuMs?.(1_000), Promise.reject(new Error("no"))) };
    const noCpu = { type: "test.job", run: () => Promise.resolve("ok") };
    await new JobRun(JOB, withCpu, client, { ...OPTIONS, energy }, callbacks).run();
    await new JobRun(JOB, failing, client, { ...OPTIONS, energy }, callbacks).run();
    await new JobRun(JOB, noCpu, client, { ...OPTIONS, energy }, callbacks).run();
    await new JobRun(JOB, withCpu, client, OPTIONS, callbacks).run();
    expect(ends).toEqual([
      { call: "complete", energyJ: 20 },
      { call: "fail", energyJ: 8 },
      { call: "complete", energyJ: undefined },
      { call: "complete", energyJ: undefined },
    ]);
  });
});
