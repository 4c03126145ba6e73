import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { cpus as osCpus, type CpuInfo } from "node:os";
import { join } from "node:path";

/**
 * Cheap readings of the machine, taken about once a minute (battery) or every few seconds (CPU).
 * Each answers `undefined` where the platform gives no cheap answer; the policy then does not use it.
 */

/** Runs a command and answers its stdout, or undefined when it fails (injectable, for tests). */
export type CommandRunner = (command: string, args: string[]) => Promise<string | undefined>;

/** Linux: /sys/class/power_supply. macOS: `pmset -g batt`. Windows: the WMI battery status. */
export async function readOnBattery(platform = process.platform, sysfsRoot = "/sys/class/power_supply", run: CommandRunner = runCommand): Promise<boolean | undefined> {
  if (platform === "linux") return linuxOnBattery(sysfsRoot);
  if (platform === "darwin") return parsePmsetBattery(await run("pmset", ["-g", "batt"]));
  if (platform === "win32") return parseWindowsBatteryStatus(await run("powershell.exe", ["-NoProfile", "-Command", "(Get-CimInstance Win32_Battery).BatteryStatus"]));
  return undefined;
}

/** `pmset -g batt` prints "Now drawing from 'Battery Power'" or "'AC Power'" (or 'UPS Power') on its first line. */
export function parsePmsetBattery(out: string | undefined): boolean | undefined {
  const source = out && /Now drawing from '([^']+)'/.exec(out)?.[1];
  if (source === "Battery Power") return true;
  if (source === "AC Power" || source === "UPS Power") return false;
  return undefined;
}

/**
 * `Win32_Battery.BatteryStatus`, one line per battery: 1 = discharging, 2 = on AC, 3–9 charging or charged states,
 * 10/11 = partially charged or undefined. No battery: empty output. On battery when any battery discharges.
 */
export function parseWindowsBatteryStatus(out: string | undefined): boolean | undefined {
  const statuses = (out ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  if (statuses.length === 0) return undefined;
  return statuses.includes(1);
}

export async function linuxOnBattery(root: string): Promise<boolean | undefined> {
  let supplies: string[];
  try {
    supplies = await readdir(root);
  } catch {
    return undefined;
  }
  let sawBattery = false;
  let discharging = false;
  for (const name of supplies) {
    const type = (await readText(join(root, name, "type")))?.trim();
    if (type === "Mains" || type === "USB") {
      if ((await readText(join(root, name, "online")))?.trim() === "1") return false;
    } else if (type === "Battery") {
      sawBattery = true;
      if ((await readText(join(root, name, "status")))?.trim() === "Discharging") discharging = true;
    }
  }
  return sawBattery ? discharging : undefined;
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

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

function runCommand(command: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 5_000, windowsHide: true }, (error, stdout) => resolve(error ? undefined : stdout));
  });
}
