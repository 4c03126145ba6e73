import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, type CpuInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CpuSampler, linuxOnBattery } from "../../../extension/policy/probes";

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
