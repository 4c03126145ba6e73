import * as vscode from "vscode";
import { resolveDonorSettings, type DonorSettings, type RawDonorSettings } from "../policy/donorSettings";
import type { PresetSource } from "../donorState/donorState";

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
  "pauseWhileRunning",
  "pauseGpuWhileRunning",
  "meteredLimitMB",
  "minBatteryPercent",
  "wattsPerCore",
];

/** The `farmhand.*` settings that shape donating, read once per change (resolving them is policy/donorSettings.ts). */
export function readDonorSettings(cores: number): DonorSettings {
  const config = vscode.workspace.getConfiguration("farmhand");
  const raw: RawDonorSettings = Object.fromEntries(KEYS.map((key) => [key, config.get<unknown>(key)]));
  return resolveDonorSettings(raw, cores);
}

/**
 * Where the effective `farmhand.preset` comes from, as `inspect()` tells it: machine-scoped, so only the default or
 * the user-level value counts, and in a remote window (code-server, SSH, containers) VS Code takes that value from
 * the Remote tab only. A workspace value is shown too: VS Code ignores it for a machine-scoped setting.
 */
export function presetSource(): PresetSource {
  const seen = vscode.workspace.getConfiguration("farmhand").inspect<unknown>("preset");
  if (seen?.globalValue !== undefined) return vscode.env.remoteName === undefined ? "user" : "remote";
  if (seen?.workspaceValue !== undefined || seen?.workspaceFolderValue !== undefined) return "workspaceIgnored";
  return "default";
}
