/** Donation presets, BOINC-style: how much of the machine, and how polite about it. */
export type PresetName = "light" | "medium" | "full";

export type Preset = {
  /** Fraction of the logical cores that may run jobs at once (at least one job). */
  coreShare: number;
  /** Minutes without keyboard/mouse activity in VS Code before donating starts. */
  idleMinutes: number;
  /** Pause when other programs use more than this fraction of all cores. */
  otherCpuThreshold: number;
  /** Freeze running jobs when the owner comes back (else they run on at the lowest priority until they end). */
  suspendOnReturn: boolean;
  /** Freeze running jobs while the CPU is hotter than this (°C). */
  maxCpuTemperatureC: number;
};

export const PRESETS: Record<PresetName, Preset> = {
  light: { coreShare: 0.25, idleMinutes: 10, otherCpuThreshold: 0.25, suspendOnReturn: true, maxCpuTemperatureC: 80 },
  medium: { coreShare: 0.5, idleMinutes: 5, otherCpuThreshold: 0.5, suspendOnReturn: true, maxCpuTemperatureC: 85 },
  full: { coreShare: 1, idleMinutes: 0, otherCpuThreshold: 0.8, suspendOnReturn: false, maxCpuTemperatureC: 90 },
};

export function concurrencyFor(coreShare: number, cores: number): number {
  return Math.max(1, Math.floor(cores * Math.min(1, Math.max(0, coreShare))));
}
