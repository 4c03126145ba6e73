import * as vscode from "vscode";
import { resolveDonorSettings, type DonorSettings, type RawDonorSettings } from "../policy/donorSettings";

export type { DonorSettings } from "../policy/donorSettings";

const KEYS: ReadonlyArray<keyof RawDonorSettings> = [
  "preset",
  "maxConcurrentJobs",
  "idleMinutes",
  "otherCpuThresholdPercent",
  "donateOnBattery",
  "allowRemoteDonation",
  "timeWindows",
  "suspendLimitMinutes",
  "maxCpuTemperatureC",
  "quietHours",
];

/** The `farmhand.*` settings that shape donating, read once per change (resolving them is policy/donorSettings.ts). */
export function readDonorSettings(cores: number): DonorSettings {
  const config = vscode.workspace.getConfiguration("farmhand");
  const raw: RawDonorSettings = Object.fromEntries(KEYS.map((key) => [key, config.get<unknown>(key)]));
  return resolveDonorSettings(raw, cores);
}
