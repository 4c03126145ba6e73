import * as vscode from "vscode";
import { concurrencyFor, PRESETS, type PresetName } from "../policy/presets";
import { MAX_CONCURRENCY } from "../worker";
import { parseTimeWindow, type TimeWindow } from "../policy/timeWindows";

/** The `farmhand.*` settings that shape donating, read once per change and resolved against the preset. */
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
};

export function readDonorSettings(cores: number): DonorSettings {
  const config = vscode.workspace.getConfiguration("farmhand");
  const presetName = config.get<PresetName>("preset", "medium");
  const preset = PRESETS[presetName] ?? PRESETS.medium;
  const windows: TimeWindow[] = [];
  const windowErrors: string[] = [];
  for (const spec of config.get<string[]>("timeWindows", [])) {
    const parsed = typeof spec === "string" ? parseTimeWindow(spec) : { ok: false as const, error: `${JSON.stringify(spec)} is not text` };
    if (parsed.ok) windows.push(parsed.window);
    else windowErrors.push(parsed.error);
  }
  const maxJobs = config.get<number | null>("maxConcurrentJobs", null);
  const idle = config.get<number | null>("idleMinutes", null);
  const cpu = config.get<number | null>("otherCpuThresholdPercent", null);
  return {
    preset: presetName in PRESETS ? presetName : "medium",
    // The farm allows at most MAX_CONCURRENCY jobs per worker, whatever the machine or settings.json say.
    concurrency: Math.min(MAX_CONCURRENCY, maxJobs && maxJobs > 0 ? Math.floor(maxJobs) : concurrencyFor(preset.coreShare, cores)),
    idleMinutes: idle !== null && idle >= 0 ? idle : preset.idleMinutes,
    otherCpuThreshold: cpu !== null && cpu > 0 ? Math.min(100, cpu) / 100 : preset.otherCpuThreshold,
    donateOnBattery: config.get<boolean>("donateOnBattery", false),
    allowRemoteDonation: config.get<boolean>("allowRemoteDonation", false),
    windows,
    windowErrors,
  };
}
