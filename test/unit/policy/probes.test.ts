import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, type CpuInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CpuSampler, linuxPower, parseIoregIdleMs, parsePmsetBattery, parsePmsetPercent, parseWindowsBattery, readOsIdleMs, readPower, type CommandRunner } from "../../../extension/policy/probes";

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
    const root = supplies({ AC: { type: "Mains", online: "0" }, BAT0: { type: "Battery", status: "Discharging", capacity: "57" } });
    expect(await linuxPower(root)).toEqual({ onBattery: true, percent: 57 });
  });

  it("is on mains power when an adapter is online", async () => {
    const root = supplies({ AC: { type: "Mains", online: "1" }, BAT0: { type: "Battery", status: "Discharging" } });
    expect((await linuxPower(root)).onBattery).toBe(false);
  });

  it("reads the charge from the batteries' energy counters together (two batteries of different sizes), else their capacity", async () => {
    const counters = supplies({
      AC: { type: "Mains", online: "1" },
      BAT0: { type: "Battery", status: "Charging", energy_now: "20000000", energy_full: "40000000", capacity: "50" },
      BAT1: { type: "Battery", status: "Full", energy_now: "20000000", energy_full: "20000000", capacity: "100" },
    });
    expect(await linuxPower(counters)).toEqual({ onBattery: false, percent: 67 });
    const charge = supplies({ BAT0: { type: "Battery", status: "Charging", charge_now: "3000000", charge_full: "4000000" } });
    expect((await linuxPower(charge)).percent).toBe(75);
    const capacities = supplies({ BAT0: { type: "Battery", status: "Charging", capacity: "80" }, BAT1: { type: "Battery", status: "Charging", capacity: "40" } });
    expect((await linuxPower(capacities)).percent).toBe(60);
  });

  it("does not know on a machine without a battery or sysfs", async () => {
    expect(await linuxPower(supplies({}))).toEqual({});
    expect(await linuxPower(supplies({ AC: { type: "Mains", online: "0" } }))).toEqual({});
    expect(await linuxPower("/nonexistent/power_supply")).toEqual({});
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

  it("reads the internal battery's charge, not a UPS's", () => {
    expect(parsePmsetPercent(PMSET_BATTERY)).toBe(87);
    expect(parsePmsetPercent(PMSET_AC)).toBe(100);
    expect(parsePmsetPercent(PMSET_DESKTOP)).toBeUndefined();
    expect(parsePmsetPercent(PMSET_UPS)).toBeUndefined();
    expect(parsePmsetPercent(undefined)).toBeUndefined();
  });

  it("knows nothing when pmset failed or said something else", () => {
    expect(parsePmsetBattery(undefined)).toBeUndefined();
    expect(parsePmsetBattery("")).toBeUndefined();
    expect(parsePmsetBattery("pmset: command not found")).toBeUndefined();
  });
});

describe("battery probe (Windows Win32_Battery: status and charge)", () => {
  it("is on battery when a battery discharges (status 1), on AC otherwise; the charge is the batteries' mean", () => {
    expect(parseWindowsBattery("1 64\r\n")).toEqual({ onBattery: true, percent: 64 });
    expect(parseWindowsBattery("2 100\r\n")).toEqual({ onBattery: false, percent: 100 });
    expect(parseWindowsBattery("6 30\r\n")).toEqual({ onBattery: false, percent: 30 }); // charging
    expect(parseWindowsBattery("2 90\r\n1 50\r\n")).toEqual({ onBattery: true, percent: 70 }); // two batteries, one discharging
    expect(parseWindowsBattery("2 \r\n")).toEqual({ onBattery: false }); // no charge reported
  });

  it("knows nothing without a battery or an answer", () => {
    expect(parseWindowsBattery("")).toEqual({});
    expect(parseWindowsBattery("\r\n")).toEqual({});
    expect(parseWindowsBattery(undefined)).toEqual({});
    expect(parseWindowsBattery("Get-CimInstance : Invalid class\r\n")).toEqual({});
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

  it("macOS asks `pmset -g batt` once and reads the source and the charge from its answer", async () => {
    const onBattery = recording({ "pmset -g batt": "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=1)\t81%; discharging;\n" });
    expect(await readPower("darwin", "/nonexistent", onBattery.run)).toEqual({ onBattery: true, percent: 81 });
    expect(onBattery.lines).toEqual([["pmset", "-g", "batt"]]);
    const onAc = recording({ "pmset -g batt": "Now drawing from 'AC Power'\n" });
    expect(await readPower("darwin", "/nonexistent", onAc.run)).toEqual({ onBattery: false, percent: undefined });
    // a failed command (or another subcommand's answer) is not known, never a guess
    expect(await readPower("darwin", "/nonexistent", recording({}).run)).toEqual({ onBattery: undefined, percent: undefined });
  });

  it("Windows asks WMI once for each battery's status and charge, without a profile", async () => {
    const command = 'Get-CimInstance Win32_Battery | ForEach-Object { "$($_.BatteryStatus) $($_.EstimatedChargeRemaining)" }';
    const win = recording({ [`powershell.exe -NoProfile -Command ${command}`]: "1 42\r\n" });
    expect(await readPower("win32", "/nonexistent", win.run)).toEqual({ onBattery: true, percent: 42 });
    expect(win.lines).toEqual([["powershell.exe", "-NoProfile", "-Command", command]]);
  });

  it("Linux runs no command; other platforms know nothing", async () => {
    const linux = recording({});
    await readPower("linux", "/nonexistent", linux.run);
    expect(await readPower("freebsd", "/nonexistent", linux.run)).toEqual({});
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
