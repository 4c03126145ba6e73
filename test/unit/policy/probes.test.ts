import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, type CpuInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CpuSampler, linuxOnBattery, parseIoregIdleMs, parsePmsetBattery, parseWindowsBatteryStatus, readOnBattery, readOsIdleMs, type CommandRunner } from "../../../extension/policy/probes";

describe("battery probe (Linux sysfs)", () => {
  const roots: string[] = [];
  const supplies = (entries: Record<string, Record<string, string>>) => {
    const root = mkdtempSync(join(tmpdir(), "farmhand-power-"));
    roots.push(root);
    for (const [name, files] of Object.entries(entries)) {
      mkdirSync(join(root, name));
      for (const [file, text] of Object.entries(files)) writeFileSync(join(root, name, file), text + "\n");
    }
    return root;
  };
  afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

  it("is on battery when the battery discharges and no mains is online", async () => {
    const root = supplies({ AC: { type: "Mains", online: "0" }, BAT0: { type: "Battery", status: "Discharging" } });
    expect(await linuxOnBattery(root)).toBe(true);
  });

  it("is on mains power when an adapter is online", async () => {
    const root = supplies({ AC: { type: "Mains", online: "1" }, BAT0: { type: "Battery", status: "Discharging" } });
    expect(await linuxOnBattery(root)).toBe(false);
  });

  it("does not know on a machine without a battery or sysfs", async () => {
    expect(await linuxOnBattery(supplies({}))).toBeUndefined();
    expect(await linuxOnBattery("/nonexistent/power_supply")).toBeUndefined();
  });
});

describe("CpuSampler", () => {
  const cpu = (busy: number, idle: number, nice = 0): CpuInfo => ({
    model: "test",
    speed: 1,
    times: { user: busy, nice, sys: 0, idle, irq: 0 },
  });

  it("reports the busy fraction across cores between samples", () => {
    const readings = [
      [cpu(0, 0), cpu(0, 0)],
      [cpu(100, 100), cpu(50, 150)],
    ];
    const sampler = new CpuSampler(() => readings.shift()!);
    expect(sampler.sample()).toBeUndefined(); // first sample has nothing to compare with
    const sample = sampler.sample()!;
    expect(sample.busy).toBeCloseTo(150 / 400);
    expect(sample.niced).toBe(0);
  });

  it("tells niced time (Farmhand's own low-priority jobs) apart", () => {
    const readings = [
      [cpu(0, 0, 0), cpu(0, 0, 0)],
      [cpu(20, 80, 100), cpu(0, 200, 0)], // core 1: a niced job ran half the time; core 2 idle
    ];
    const sampler = new CpuSampler(() => readings.shift()!);
    sampler.sample();
    const sample = sampler.sample()!;
    expect(sample.busy).toBeCloseTo(120 / 400);
    expect(sample.niced).toBeCloseTo(100 / 400);
  });
});

// Outputs recorded from the real commands.
const PMSET_BATTERY = "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=4653155)\t87%; discharging; 5:12 remaining present: true\n";
const PMSET_AC = "Now drawing from 'AC Power'\n -InternalBattery-0 (id=4653155)\t100%; charged; 0:00 remaining present: true\n";
const PMSET_DESKTOP = "Now drawing from 'AC Power'\n";
const PMSET_UPS = "Now drawing from 'UPS Power'\n -CyberPower UPS (id=1)\t100%; AC attached; not charging present: true\n";

describe("battery probe (macOS pmset -g batt)", () => {
  it("reads the power source from pmset's output", () => {
    expect(parsePmsetBattery(PMSET_BATTERY)).toBe(true);
    expect(parsePmsetBattery(PMSET_AC)).toBe(false);
    expect(parsePmsetBattery(PMSET_DESKTOP)).toBe(false);
    expect(parsePmsetBattery(PMSET_UPS)).toBe(false);
  });

  it("knows nothing when pmset failed or said something else", () => {
    expect(parsePmsetBattery(undefined)).toBeUndefined();
    expect(parsePmsetBattery("")).toBeUndefined();
    expect(parsePmsetBattery("pmset: command not found")).toBeUndefined();
  });
});

describe("battery probe (Windows Win32_Battery.BatteryStatus)", () => {
  it("is on battery when a battery discharges (status 1), on AC otherwise", () => {
    expect(parseWindowsBatteryStatus("1\r\n")).toBe(true);
    expect(parseWindowsBatteryStatus("2\r\n")).toBe(false);
    expect(parseWindowsBatteryStatus("6\r\n")).toBe(false); // charging
    expect(parseWindowsBatteryStatus("2\r\n1\r\n")).toBe(true); // two batteries, one discharging
  });

  it("knows nothing without a battery or an answer", () => {
    expect(parseWindowsBatteryStatus("")).toBeUndefined();
    expect(parseWindowsBatteryStatus("\r\n")).toBeUndefined();
    expect(parseWindowsBatteryStatus(undefined)).toBeUndefined();
    expect(parseWindowsBatteryStatus("Get-CimInstance : Invalid class\r\n")).toBeUndefined();
  });
});

describe("system idle time (macOS ioreg)", () => {
  it("reads HIDIdleTime (nanoseconds) as milliseconds", () => {
    const out = '+-o IOHIDSystem  <class IOHIDSystem, id 0x100000313>\n    |   "HIDIdleTime" = 61234567890\n    |   "HIDParameters" = {}\n';
    expect(parseIoregIdleMs(out)).toBe(61_234);
    expect(parseIoregIdleMs("nothing here")).toBeUndefined();
    expect(parseIoregIdleMs(undefined)).toBeUndefined();
  });
});

describe("the probes' command lines (through an injected runner)", () => {
  /** A runner that records each command line and answers what `answers` has for it (else fails: undefined). */
  const recording = (answers: Record<string, string>) => {
    const lines: string[][] = [];
    const run: CommandRunner = (command, args) => {
      lines.push([command, ...args]);
      return Promise.resolve(answers[[command, ...args].join(" ")]);
    };
    return { run, lines };
  };

  it("macOS asks `pmset -g batt` and reads its answer", async () => {
    const onBattery = recording({ "pmset -g batt": "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=1)\t81%; discharging;\n" });
    expect(await readOnBattery("darwin", "/nonexistent", onBattery.run)).toBe(true);
    expect(onBattery.lines).toEqual([["pmset", "-g", "batt"]]);
    const onAc = recording({ "pmset -g batt": "Now drawing from 'AC Power'\n" });
    expect(await readOnBattery("darwin", "/nonexistent", onAc.run)).toBe(false);
    // a failed command (or another subcommand's answer) is not known, never a guess
    expect(await readOnBattery("darwin", "/nonexistent", recording({}).run)).toBeUndefined();
  });

  it("Windows asks WMI for the battery status without a profile", async () => {
    const win = recording({ "powershell.exe -NoProfile -Command (Get-CimInstance Win32_Battery).BatteryStatus": "1\r\n" });
    expect(await readOnBattery("win32", "/nonexistent", win.run)).toBe(true);
    expect(win.lines).toEqual([["powershell.exe", "-NoProfile", "-Command", "(Get-CimInstance Win32_Battery).BatteryStatus"]]);
  });

  it("Linux runs no command; other platforms know nothing", async () => {
    const linux = recording({});
    await readOnBattery("linux", "/nonexistent", linux.run);
    await readOnBattery("freebsd", "/nonexistent", linux.run);
    expect(linux.lines).toEqual([]);
  });

  it("macOS idle time asks ioreg for IOHIDSystem; elsewhere nothing is run", async () => {
    const mac = recording({ "ioreg -c IOHIDSystem -d 4": '    |   "HIDIdleTime" = 2000000000\n' });
    expect(await readOsIdleMs("darwin", mac.run)).toBe(2_000);
    expect(mac.lines).toEqual([["ioreg", "-c", "IOHIDSystem", "-d", "4"]]);
    const linux = recording({});
    expect(await readOsIdleMs("linux", linux.run)).toBeUndefined();
    expect(linux.lines).toEqual([]);
  });
});
