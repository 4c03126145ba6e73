import { VSCODE_ONLY_TEXT } from "./idle/machineIdle";
import type { ThermalReading } from "./thermal";

/** What the policy senses on this machine, for the panel and the tooltip: one line. */
export type Sensing = {
  /** The machine-wide idle source in use; null: none answers (VS Code activity only); undefined: not tried yet. */
  idleSource: string | null | undefined;
  /** The last temperature reading (undefined: none yet, or none on this platform). */
  thermal?: ThermalReading;
  /** farmhand.maxCpuTemperatureC in force (0: no limit). */
  maxCpuTemperatureC?: number;
  tooHot?: boolean;
  /** Read, and nothing came back: this machine gives no temperature (Windows, or no sensor exposed). */
  noThermalReading?: boolean;
  /** Inside farmhand.quietHours now. */
  quietHours?: boolean;
};

export function sensingText(s: Sensing): string | undefined {
  const parts: string[] = [];
  if (s.idleSource === null) parts.push(VSCODE_ONLY_TEXT);
  else if (s.idleSource !== undefined) parts.push(`idle read from ${s.idleSource}`);
  const heat = heatText(s);
  if (heat) parts.push(heat);
  if (s.quietHours) parts.push("quiet hours: one job at a time");
  return parts.length ? parts.join(" · ") : undefined;
}

function heatText({ thermal, maxCpuTemperatureC: limit, tooHot, noThermalReading }: Sensing): string | undefined {
  if (limit === undefined) return undefined;
  if (noThermalReading && !thermal) return "no CPU temperature readable on this machine: no heat limit";
  if (limit <= 0) return thermal?.celsius === undefined ? "no CPU temperature limit" : `CPU ${Math.round(thermal.celsius)} °C, no limit`;
  if (thermal?.celsius !== undefined) {
    return tooHot ? `CPU ${Math.round(thermal.celsius)} °C: too hot, jobs frozen until below ${limit - 5} °C` : `CPU ${Math.round(thermal.celsius)} °C (limit ${limit} °C)`;
  }
  if (thermal?.throttled !== undefined) return thermal.throttled ? "macOS limits the CPU for heat: jobs frozen" : "macOS reports no thermal limit";
  return undefined;
}
