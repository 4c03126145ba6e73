import { MAX_CONCURRENCY } from "../worker";
import { concurrencyFor, PRESETS, type PresetName } from "./presets";
import { parseTimeWindow, type TimeWindow } from "./timeWindows";

/** The `farmhand.*` settings that shape donating, resolved against the preset. */
export type DonorSettings = {
  preset: PresetName;
  concurrency: number;
  idleMinutes: number;
  otherCpuThreshold: number;
  donateOnBattery: boolean;
  allowRemoteDonation: boolean;
  windows: TimeWindow[];
  /** Time-window entries that could not be read, with why; shown to the donor, never silently dropped. */
  windowErrors: string[];
  /** Freeze running jobs while the owner uses the machine (the preset says; `full` lets them run on). */
  suspendOnReturn: boolean;
  /** A job frozen longer than this goes back to the queue (farmhand.suspendLimitMinutes). */
  suspendLimitMs: number;
  /** Freeze jobs above this CPU temperature (°C); 0: no limit (farmhand.maxCpuTemperatureC, default from the preset). */
  maxCpuTemperatureC: number;
  /** farmhand.quietHours: one job at a time inside them. Entries that cannot be read are in `windowErrors` and ignored. */
  quietHours: TimeWindow[];
  /** Quiet-hour entries that could not be read: shown with the other problems; they never stop donating. */
  quietHoursErrors: string[];
  /** farmhand.pauseWhileRunning and farmhand.pauseGpuWhileRunning: program names, as written (matched case-insensitively). */
  pauseWhileRunning: string[];
  pauseGpuWhileRunning: string[];
  /** Entries of those two lists that are not program names, with why (shown with the other problems). */
  programErrors: string[];
  /** farmhand.meteredLimitMB in bytes: what jobs may download per day on a metered connection (0: nothing). */
  meteredLimitBytes: number;
  /** farmhand.minBatteryPercent: below this charge nothing is taken (0: no threshold). */
  minBatteryPercent: number;
  /** farmhand.wattsPerCore: the power figure energy estimates use where the CPU's own counter cannot be read. */
  wattsPerCore: number;
};

const DEFAULT_SUSPEND_LIMIT_MINUTES = 10;
/** farmhand.meteredLimitMB when unset: a few small jobs a day, never a large download. */
const DEFAULT_METERED_LIMIT_MB = 10;
/** farmhand.minBatteryPercent when unset and donating on battery is allowed (else no threshold). */
const DEFAULT_MIN_BATTERY_PERCENT = 90;
/** farmhand.wattsPerCore when unset: a desktop CPU's package power over its cores at full load (laptops draw less). */
export const DEFAULT_WATTS_PER_CORE = 10;
/** A program name: what a process list shows (Linux keeps 15 characters of it, Windows up to 260). */
const MAX_PROGRAM_CHARS = 260;
const MAX_PROGRAMS = 64;
/** A frozen job holds its memory and its lease; a day is the longest that can make sense. */
const MAX_SUSPEND_LIMIT_MINUTES = 24 * 60;

/** The settings as they come from VS Code: anything a settings.json can hold. */
export type RawDonorSettings = {
  preset?: unknown;
  maxConcurrentJobs?: unknown;
  idleMinutes?: unknown;
  otherCpuThresholdPercent?: unknown;
  donateOnBattery?: unknown;
  allowRemoteDonation?: unknown;
  timeWindows?: unknown;
  suspendLimitMinutes?: unknown;
  maxCpuTemperatureC?: unknown;
  quietHours?: unknown;
  pauseWhileRunning?: unknown;
  pauseGpuWhileRunning?: unknown;
  meteredLimitMB?: unknown;
  minBatteryPercent?: unknown;
  wattsPerCore?: unknown;
};

/** Resolve the raw settings against the preset; anything malformed falls back to the preset (time windows: reported). */
export function resolveDonorSettings(raw: RawDonorSettings, cores: number): DonorSettings {
  const presetName: PresetName = typeof raw.preset === "string" && Object.hasOwn(PRESETS, raw.preset) ? (raw.preset as PresetName) : "medium";
  const preset = PRESETS[presetName];
  const { windows, errors } = parseTimeWindows(raw.timeWindows);
  const maxJobs = positive(raw.maxConcurrentJobs);
  const idle = typeof raw.idleMinutes === "number" && raw.idleMinutes >= 0 ? raw.idleMinutes : undefined;
  const cpu = positive(raw.otherCpuThresholdPercent);
  const quiet = parseTimeWindows(raw.quietHours, "farmhand.quietHours");
  const heat = typeof raw.maxCpuTemperatureC === "number" && Number.isFinite(raw.maxCpuTemperatureC) && raw.maxCpuTemperatureC >= 0 ? raw.maxCpuTemperatureC : undefined;
  const limit = typeof raw.suspendLimitMinutes === "number" && Number.isFinite(raw.suspendLimitMinutes) && raw.suspendLimitMinutes >= 0 ? raw.suspendLimitMinutes : undefined;
  const pause = parsePrograms(raw.pauseWhileRunning, "farmhand.pauseWhileRunning");
  const pauseGpu = parsePrograms(raw.pauseGpuWhileRunning, "farmhand.pauseGpuWhileRunning");
  const metered = nonNegative(raw.meteredLimitMB);
  const battery = nonNegative(raw.minBatteryPercent);
  const donateOnBattery = raw.donateOnBattery === true;
  return {
    preset: presetName,
    // The farm allows at most MAX_CONCURRENCY jobs per worker, whatever the machine or settings.json say.
    concurrency: Math.min(MAX_CONCURRENCY, maxJobs !== undefined ? Math.max(1, Math.floor(maxJobs)) : concurrencyFor(preset.coreShare, cores)),
    idleMinutes: idle ?? preset.idleMinutes,
    otherCpuThreshold: cpu !== undefined ? Math.min(100, cpu) / 100 : preset.otherCpuThreshold,
    donateOnBattery,
    allowRemoteDonation: raw.allowRemoteDonation === true,
    windows,
    windowErrors: errors,
    suspendOnReturn: preset.suspendOnReturn,
    suspendLimitMs: Math.round(Math.min(MAX_SUSPEND_LIMIT_MINUTES, limit ?? DEFAULT_SUSPEND_LIMIT_MINUTES) * 60_000),
    maxCpuTemperatureC: heat ?? preset.maxCpuTemperatureC,
    quietHours: quiet.windows,
    quietHoursErrors: quiet.errors,
    pauseWhileRunning: pause.programs,
    pauseGpuWhileRunning: pauseGpu.programs,
    programErrors: [...pause.errors, ...pauseGpu.errors],
    meteredLimitBytes: Math.round((metered ?? DEFAULT_METERED_LIMIT_MB) * 1_000_000),
    minBatteryPercent: Math.min(100, battery ?? (donateOnBattery ? DEFAULT_MIN_BATTERY_PERCENT : 0)),
    wattsPerCore: positive(raw.wattsPerCore) ?? DEFAULT_WATTS_PER_CORE,
  };
}

/** A list of program names (`steam`, `obs64.exe`, `zoom.us`): every entry kept, or said why not. */
export function parsePrograms(value: unknown, setting: string): { programs: string[]; errors: string[] } {
  if (value === undefined || value === null) return { programs: [], errors: [] };
  if (!Array.isArray(value)) return { programs: [], errors: [`${setting} must be a list of program names like "steam"`] };
  const programs: string[] = [];
  const errors: string[] = [];
  for (const entry of value) {
    const name = typeof entry === "string" ? entry.trim() : "";
    if (!name || name.length > MAX_PROGRAM_CHARS || /[/\\]/.test(name) || name.includes("\0")) {
      errors.push(`${setting}: ${JSON.stringify(entry)?.slice(0, 80)} is not a program name (the name a process list shows, without a folder)`);
    } else if (!programs.some((p) => p.toLowerCase() === name.toLowerCase())) {
      programs.push(name);
    }
  }
  if (programs.length > MAX_PROGRAMS) errors.push(`${setting}: only the first ${MAX_PROGRAMS} programs are watched`);
  return { programs: programs.slice(0, MAX_PROGRAMS), errors };
}

function nonNegative(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** `farmhand.timeWindows` (or another list of windows): every entry read, or said why not. */
export function parseTimeWindows(value: unknown, setting = "farmhand.timeWindows"): { windows: TimeWindow[]; errors: string[] } {
  const windows: TimeWindow[] = [];
  const errors: string[] = [];
  if (value === undefined || value === null) return { windows, errors };
  if (!Array.isArray(value)) return { windows, errors: [`${setting} must be a list of windows like "Mon-Fri 18:00-08:00"`] };
  for (const spec of value) {
    const parsed = typeof spec === "string" ? parseTimeWindow(spec) : { ok: false as const, error: `${JSON.stringify(spec)} is not text` };
    if (parsed.ok) windows.push(parsed.window);
    else errors.push(parsed.error);
  }
  return { windows, errors };
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}
