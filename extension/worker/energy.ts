import { cpus as osCpus, type CpuInfo } from "node:os";
import { join } from "node:path";
import { listDir as list, readText as text } from "./quietReads";

/**
 * The energy a job used, reported with its end (`energyJ`). Linux, where the CPU package's energy counter can be read
 * (RAPL through powercap: `/sys/class/powercap/intel-rapl:0/energy_uj`, also AMD's on recent kernels; else AMD's
 * `amd_energy` hwmon driver): the package's energy over the job's life, times the job's share of all the CPU time the
 * machine spent meanwhile. Elsewhere (or where the counter is root-only, as on many distributions since 2020): an
 * estimate, the job's CPU time × a power figure per core (farmhand.wattsPerCore). A job whose CPU time is not known
 * (an Ollama request runs inside another program) reports none.
 */
export type EnergyGauge = {
  /** "measured" (the package counter) or "estimated" (CPU time × watts per core). */
  readonly method: "measured" | "estimated";
  /** Where the figure comes from, for the panel: "RAPL (intel-rapl:0)", "10 W per busy core". */
  readonly source: string;
  /** A job starts: what it is measured from. */
  begin(): Promise<EnergyMark>;
  /** The job ended having used `cpuMs` of CPU: its energy in joules, or undefined when not known. */
  end(mark: EnergyMark, cpuMs: number | undefined): Promise<number | undefined>;
  /** Stop the counter's sampling (the engine stopped). */
  dispose(): void;
};

export type EnergyMark = { packageJ?: number; busyMs: number };

/** One package energy counter in µJ, and where it wraps (undefined: it does not, as far as anyone can tell). */
export type EnergyCounter = { name: string; read(): Promise<number | undefined>; wrapsAtUj?: number };

/**
 * The first readable package counter under a sysfs class root (`/sys/class`): powercap's intel-rapl:0 (RAPL, Intel
 * and AMD), else an `amd_energy` hwmon chip's socket counter. Undefined when there is none, or it cannot be read.
 */
export async function findEnergyCounter(sysClass = "/sys/class"): Promise<EnergyCounter | undefined> {
  const rapl = join(sysClass, "powercap", "intel-rapl:0");
  if ((await microjoules(join(rapl, "energy_uj"))) !== undefined) {
    return { name: "RAPL (intel-rapl:0)", read: () => microjoules(join(rapl, "energy_uj")), wrapsAtUj: await microjoules(join(rapl, "max_energy_range_uj")) };
  }
  const hwmon = join(sysClass, "hwmon");
  for (const chip of await list(hwmon)) {
    if ((await text(join(hwmon, chip, "name")))?.trim() !== "amd_energy") continue;
    for (const file of await list(join(hwmon, chip))) {
      const label = /^energy(\d+)_label$/.exec(file);
      if (!label || !/^Esocket0$/.test((await text(join(hwmon, chip, file)))?.trim() ?? "")) continue;
      const input = join(hwmon, chip, `energy${label[1]}_input`);
      if ((await microjoules(input)) !== undefined) return { name: "amd_energy (socket 0)", read: () => microjoules(input) };
    }
  }
  return undefined;
}

/** A counter sampled at least this often while jobs run: RAPL's wraps every few tens of minutes under load. */
const SAMPLE_EVERY_MS = 60_000;

/**
 * The package's energy since the meter began, in joules, kept across the counter's wraps: sampled on every job's
 * start and end and, while jobs run, every minute (so two wraps never fall between samples).
 */
export class PackageEnergy {
  private totalUj = 0;
  private last: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private users = 0;
  private disposed = false;

  constructor(
    private readonly counter: EnergyCounter,
    private readonly everyMs = SAMPLE_EVERY_MS,
  ) {}

  /** Joules so far; undefined when the counter cannot be read now. */
  async sample(): Promise<number | undefined> {
    const now = await this.counter.read();
    if (now === undefined) return undefined;
    if (this.last !== undefined) {
      // a counter that went back wrapped (or, without a known range, was reset: that interval counts nothing)
      this.totalUj += now >= this.last ? now - this.last : this.counter.wrapsAtUj ? this.counter.wrapsAtUj - this.last + now : 0;
    }
    this.last = now;
    return this.totalUj / 1e6;
  }

  /** A job runs: sample every minute while any does. */
  hold(): void {
    this.users++;
    this.arm();
  }

  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.users = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer || this.disposed || this.users === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sample().finally(() => this.arm());
    }, this.everyMs);
  }
}

/** Milliseconds all cores spent busy (user, nice, system, interrupts) since boot: the machine's CPU time. */
export function machineBusyMs(readCpus: () => CpuInfo[] = osCpus): number {
  return readCpus().reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
}

/** CPU time × watts per core, in joules. */
function estimateJ(cpuMs: number, wattsPerCore: number): number {
  return (cpuMs / 1000) * wattsPerCore;
}

export type GaugeOptions = {
  /** farmhand.wattsPerCore (read at each job's end, so a changed setting applies to the next report). */
  wattsPerCore: () => number;
  /** The sysfs class root (tests point it at a fake one). */
  sysClass?: string;
  readCpus?: () => CpuInfo[];
  platform?: NodeJS.Platform;
  sampleEveryMs?: number;
};

/** The gauge for this machine: the package counter where Linux lets this user read it, else the estimate. */
export async function energyGauge(options: GaugeOptions): Promise<EnergyGauge> {
  const counter = (options.platform ?? process.platform) === "linux" ? await findEnergyCounter(options.sysClass) : undefined;
  return counter ? measuredGauge(counter, options) : estimatedGauge(options);
}

export function estimatedGauge(options: Pick<GaugeOptions, "wattsPerCore">): EnergyGauge {
  return {
    method: "estimated",
    get source() {
      return `an estimate at ${options.wattsPerCore()} W per busy core`;
    },
    begin: () => Promise.resolve({ busyMs: 0 }),
    end: (_mark, cpuMs) => Promise.resolve(cpuMs === undefined ? undefined : round(estimateJ(cpuMs, options.wattsPerCore()))),
    dispose: () => undefined,
  };
}

function measuredGauge(counter: EnergyCounter, options: GaugeOptions): EnergyGauge {
  const meter = new PackageEnergy(counter, options.sampleEveryMs);
  const busy = () => machineBusyMs(options.readCpus);
  return {
    method: "measured",
    source: counter.name,
    async begin() {
      meter.hold();
      return { packageJ: await meter.sample(), busyMs: busy() };
    },
    async end(mark, cpuMs) {
      const packageJ = await meter.sample();
      meter.release();
      if (cpuMs === undefined) return undefined;
      const machineMs = busy() - mark.busyMs;
      // the counter could not be read at either end, or the machine's CPU time did not move: estimate this one
      if (packageJ === undefined || mark.packageJ === undefined || machineMs <= 0) return round(estimateJ(cpuMs, options.wattsPerCore()));
      return round((packageJ - mark.packageJ) * Math.min(1, cpuMs / machineMs));
    },
    dispose: () => meter.dispose(),
  };
}

/** Millijoule precision is plenty. */
function round(joules: number): number {
  return Math.round(Math.max(0, joules) * 1000) / 1000;
}

async function microjoules(path: string): Promise<number | undefined> {
  const value = (await text(path))?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

