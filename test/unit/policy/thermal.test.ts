import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HeatGate, HeatWatch, hottestHwmon, hottestZone, parsePmsetTherm, readThermal } from "../../../extension/policy/thermal";

/** A fake /sys/class with the given files (path → content). */
function sysClass(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "farmhand-sysfs-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe("Linux CPU temperature", () => {
  it("takes the hottest CPU hwmon input (coretemp, k10temp…), not the disk's or the Wi-Fi card's", async () => {
    const root = sysClass({
      "hwmon/hwmon0/name": "nvme\n",
      "hwmon/hwmon0/temp1_input": "99000\n",
      "hwmon/hwmon1/name": "coretemp\n",
      "hwmon/hwmon1/temp1_input": "61000\n",
      "hwmon/hwmon1/temp2_input": "67500\n",
      "hwmon/hwmon1/temp2_label": "Core 0\n",
      "hwmon/hwmon2/name": "iwlwifi_1\n",
      "hwmon/hwmon2/temp1_input": "95000\n",
    });
    expect(await hottestHwmon(join(root, "hwmon"))).toBe(67.5);
    expect(await readThermal("linux", root)).toEqual({ celsius: 67.5 });
  });

  it("falls back to CPU-like thermal zones when no hwmon chip is the CPU", async () => {
    const root = sysClass({
      "thermal/thermal_zone0/type": "acpitz\n",
      "thermal/thermal_zone0/temp": "45000\n",
      "thermal/thermal_zone1/type": "x86_pkg_temp\n",
      "thermal/thermal_zone1/temp": "72000\n",
      "thermal/thermal_zone2/type": "BAT0\n",
      "thermal/thermal_zone2/temp": "98000\n",
      "thermal/cooling_device0/type": "Processor\n",
    });
    expect(await hottestZone(join(root, "thermal"))).toBe(72);
    expect(await readThermal("linux", root)).toEqual({ celsius: 72 });
  });

  it("no reading from missing folders, garbage, impossible values or files it may not read", async () => {
    expect(await readThermal("linux", join(tmpdir(), "farmhand-no-such-sysfs"))).toBeUndefined();
    const root = sysClass({
      "hwmon/hwmon0/name": "k10temp\n",
      "hwmon/hwmon0/temp1_input": "not a number\n",
      "hwmon/hwmon0/temp2_input": "-273000\n",
      "hwmon/hwmon0/temp3_input": "255000\n",
      "thermal/thermal_zone0/type": "cpu-thermal\n",
      "thermal/thermal_zone0/temp": "",
    });
    expect(await readThermal("linux", root)).toBeUndefined();
    const locked = sysClass({ "hwmon/hwmon0/name": "coretemp\n", "hwmon/hwmon0/temp1_input": "70000\n", "hwmon/hwmon0/temp2_input": "50000\n" });
    chmodSync(join(locked, "hwmon/hwmon0/temp1_input"), 0o000);
    // root reads anything; as another user the unreadable one is skipped, and the readable one still counts
    expect([70, 50]).toContain((await readThermal("linux", locked))?.celsius);
  });

  it("Windows offers nothing cheap: no reading", async () => {
    expect(await readThermal("win32")).toBeUndefined();
  });
});

describe("macOS pmset -g therm", () => {
  it("all well: no warning recorded, or a CPU speed limit of 100", () => {
    const calm = "Note: No thermal warning level has been recorded\nNote: No performance warning level has been recorded\nNote: No CPU power status has been recorded\n";
    expect(parsePmsetTherm(calm)).toEqual({ throttled: false });
    expect(parsePmsetTherm("CPU_Scheduler_Limit \t= 100\nCPU_Available_CPUs \t= 8\nCPU_Speed_Limit \t= 100\n")).toEqual({ throttled: false });
  });

  it("throttled: a speed limit under 100 %, or a thermal warning level above 0", () => {
    expect(parsePmsetTherm("CPU_Scheduler_Limit \t= 100\nCPU_Available_CPUs \t= 8\nCPU_Speed_Limit \t= 62\n")).toEqual({ throttled: true });
    expect(parsePmsetTherm("Thermal warning level has been set to 2\n")).toEqual({ throttled: true });
  });

  it("no reading from garbage or nothing", () => {
    expect(parsePmsetTherm("pmset: unknown option\n")).toBeUndefined();
    expect(parsePmsetTherm(undefined)).toBeUndefined();
  });
});

describe("the heat gate", () => {
  it("hot above the limit, cool only below the limit minus 5 °C", () => {
    const gate = new HeatGate(85);
    expect([84, 85, 85.5, 84, 80.5, 79.9, 83].map((celsius) => gate.update({ celsius }))).toEqual([false, false, true, true, true, false, false]);
  });

  it("a missing reading keeps the verdict; 0 turns the limit off at once", () => {
    const gate = new HeatGate(80);
    gate.update({ celsius: 95 });
    expect(gate.update(undefined)).toBe(true);
    gate.configure(0);
    expect(gate.tooHot).toBe(false);
    expect(gate.update({ celsius: 120 })).toBe(false);
  });

  it("on macOS the system's own thermal limit is the verdict", () => {
    const gate = new HeatGate(85);
    expect(gate.update({ throttled: true })).toBe(true);
    expect(gate.update({ throttled: false })).toBe(false);
  });
});

describe("the heat watch", () => {
  afterEach(() => vi.useRealTimers());

  it("reads on its timer and says only when the verdict changes", async () => {
    vi.useFakeTimers();
    const temps = [70, 86, 88, 82, 79];
    let i = 0;
    const changes: boolean[] = [];
    const watch = new HeatWatch(new HeatGate(85), (hot) => changes.push(hot), 5_000, () => Promise.resolve({ celsius: temps[Math.min(i++, temps.length - 1)] }));
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(watch.latest).toEqual({ celsius: 70 });
    await vi.advanceTimersByTimeAsync(4 * 5_000);
    expect(changes).toEqual([true, false]);
    watch.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(i).toBe(5);
  });
});
