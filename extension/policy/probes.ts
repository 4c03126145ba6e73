import { readdir } from "node:fs/promises";
import { cpus as osCpus, type CpuInfo } from "node:os";
import { join } from "node:path";
import { readText, runQuiet as runCommand } from "../worker/quietReads";

/**
 * Cheap readings of the machine, taken about once a minute (battery) or every few seconds (CPU).
 * Each answers `undefined` where the platform gives no cheap answer; the policy then does not use it.
 */

/** Runs a command and answers its stdout, or undefined when it fails (injectable, for tests). */
export type CommandRunner = (command: string, args: string[]) => Promise<string | undefined>;

/** The power source (on battery or not) and the battery's charge in percent; each undefined where not known. */
export type PowerReading = { onBattery?: boolean; percent?: number };

/** Windows: each battery's status and charge on a line ("2 95"), from WMI's Win32_Battery. */
const WINDOWS_BATTERY = 'Get-CimInstance Win32_Battery | ForEach-Object { "$($_.BatteryStatus) $($_.EstimatedChargeRemaining)" }';

/** Linux: /sys/class/power_supply. macOS: `pmset -g batt`. Windows: WMI's Win32_Battery. One read answers both. */
export async function readPower(platform = process.platform, sysfsRoot = "/sys/class/power_supply", run: CommandRunner = runCommand): Promise<PowerReading> {
  if (platform === "linux") return linuxPower(sysfsRoot);
  if (platform === "darwin") {
    const out = await run("pmset", ["-g", "batt"]);
    return { onBattery: parsePmsetBattery(out), percent: parsePmsetPercent(out) };
  }
  if (platform === "win32") return parseWindowsBattery(await run("powershell.exe", ["-NoProfile", "-Command", WINDOWS_BATTERY]));
  return {};
}

/** `pmset -g batt` prints "Now drawing from 'Battery Power'" or "'AC Power'" (or 'UPS Power') on its first line. */
export function parsePmsetBattery(out: string | undefined): boolean | undefined {
  const source = out && /Now drawing from '([^']+)'/.exec(out)?.[1];
  if (source === "Battery Power") return true;
  if (source === "AC Power" || source === "UPS Power") return false;
  return undefined;
}

/** The internal battery's line: " -InternalBattery-0 (id=…)\t87%; discharging; …" (a UPS's line is not this machine's). */
export function parsePmsetPercent(out: string | undefined): number | undefined {
  const match = out && /-InternalBattery-\d+[^\n]*?\s(\d{1,3})%/.exec(out);
  return match ? percentOf(Number(match[1])) : undefined;
}

/**
 * Win32_Battery, one line per battery: `BatteryStatus EstimatedChargeRemaining`. Status 1 = discharging, 2 = on AC,
 * 3–9 charging or charged states, 10/11 = partially charged or undefined. No battery: no line. On battery when any
 * battery discharges; the charge is the batteries' mean.
 */
export function parseWindowsBattery(out: string | undefined): PowerReading {
  const lines = (out ?? "")
    .split(/\r?\n/)
    .map((l) => /^\s*(\d+)(?:\s+(\d+))?\s*$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[1]) > 0);
  if (lines.length === 0) return {};
  const charges = lines.flatMap((m) => (m[2] === undefined ? [] : [Number(m[2])])).filter((n) => n <= 100);
  return {
    onBattery: lines.some((m) => m[1] === "1"),
    ...(charges.length ? { percent: percentOf(charges.reduce((a, b) => a + b, 0) / charges.length) } : {}),
  };
}

/** The power source from the supplies' `type`/`online`/`status`, the charge from their energy (or charge) counters, else `capacity`. */
export async function linuxPower(root: string): Promise<PowerReading> {
  let supplies: string[];
  try {
    supplies = await readdir(root);
  } catch {
    return {};
  }
  let sawBattery = false;
  let discharging = false;
  let mainsOnline = false;
  let now = 0;
  let full = 0;
  const capacities: number[] = [];
  for (const name of supplies) {
    const type = (await readText(join(root, name, "type")))?.trim();
    if (type === "Mains" || type === "USB") {
      if ((await readText(join(root, name, "online")))?.trim() === "1") mainsOnline = true;
    } else if (type === "Battery") {
      sawBattery = true;
      if ((await readText(join(root, name, "status")))?.trim() === "Discharging") discharging = true;
      const counters = (await counterPair(root, name, "energy")) ?? (await counterPair(root, name, "charge"));
      if (counters) {
        now += counters.now;
        full += counters.full;
      }
      const capacity = (await readText(join(root, name, "capacity")))?.trim();
      if (capacity && Number.isFinite(Number(capacity))) capacities.push(Number(capacity));
    }
  }
  const onBattery = mainsOnline ? false : sawBattery ? discharging : undefined;
  const percent = full > 0 ? (100 * now) / full : capacities.length ? capacities.reduce((a, b) => a + b, 0) / capacities.length : undefined;
  return { ...(onBattery === undefined ? {} : { onBattery }), ...(percent === undefined ? {} : { percent: percentOf(percent) }) };
}

/** `energy_now`/`energy_full` (µWh) or `charge_now`/`charge_full` (µAh) of one battery, when both are numbers. */
async function counterPair(root: string, name: string, kind: "energy" | "charge"): Promise<{ now: number; full: number } | undefined> {
  const now = Number((await readText(join(root, name, `${kind}_now`)))?.trim() ?? NaN);
  const full = Number((await readText(join(root, name, `${kind}_full`)))?.trim() ?? NaN);
  return Number.isFinite(now) && Number.isFinite(full) && full > 0 ? { now, full } : undefined;
}

function percentOf(n: number): number {
  return Math.min(100, Math.max(0, Math.round(n)));
}

/** macOS only: the system-wide time since the last keyboard or mouse event. */
export async function readOsIdleMs(platform = process.platform, run: CommandRunner = runCommand): Promise<number | undefined> {
  if (platform !== "darwin") return undefined;
  return parseIoregIdleMs(await run("ioreg", ["-c", "IOHIDSystem", "-d", "4"]));
}

/** `ioreg -c IOHIDSystem` reports "HIDIdleTime" = nanoseconds since the last input event. */
export function parseIoregIdleMs(out: string | undefined): number | undefined {
  const match = out && /"HIDIdleTime"\s*=\s*(\d+)/.exec(out);
  return match ? Math.floor(Number(match[1]) / 1e6) : undefined;
}

/**
 * Fraction (0..1) of all cores busy since the previous sample, from the kernel's per-core counters.
 * `niced` is the part spent in niced processes: Farmhand's own jobs run at the lowest priority, so on Linux and
 * macOS "other programs' load" is `busy - niced`. Windows reports no nice time; there the caller subtracts an
 * estimate of its own jobs' share instead.
 */
export class CpuSampler {
  private previous: CpuInfo[] | undefined;

  constructor(private readonly readCpus: () => CpuInfo[] = osCpus) {}

  sample(): { busy: number; niced: number } | undefined {
    const current = this.readCpus();
    const previous = this.previous;
    this.previous = current;
    if (!previous || previous.length !== current.length) return undefined;
    let busy = 0;
    let niced = 0;
    let total = 0;
    current.forEach((cpu, i) => {
      const before = previous[i].times;
      const t = cpu.times;
      const idle = t.idle - before.idle;
      const all = t.user - before.user + (t.nice - before.nice) + (t.sys - before.sys) + (t.irq - before.irq) + idle;
      busy += all - idle;
      niced += t.nice - before.nice;
      total += all;
    });
    const fraction = (x: number) => Math.min(1, Math.max(0, x / total));
    return total > 0 ? { busy: fraction(busy), niced: fraction(niced) } : undefined;
  }
}

