import { VSCODE_ONLY_TEXT } from "./idle/machineIdle";
import { megabytes } from "./policy";
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
  /**
   * The connection's cost, while donating is wanted: where it is read from (null: this platform does not say), whether
   * it is metered, and what jobs may still download today (farmhand.meteredLimitMB).
   */
  metered?: { source: string | null; metered?: boolean; leftBytes?: number; limitBytes: number };
  /** farmhand.pauseWhileRunning or pauseGpuWhileRunning name programs: whether they can be seen here. */
  programs?: { unreadable: boolean; gpuProgram?: string };
};

export function sensingText(s: Sensing): string | undefined {
  const parts: string[] = [];
  if (s.idleSource === null) parts.push(VSCODE_ONLY_TEXT);
  else if (s.idleSource !== undefined) parts.push(`idle read from ${s.idleSource}`);
  const heat = heatText(s);
  if (heat) parts.push(heat);
  if (s.quietHours) parts.push("quiet hours: one job at a time");
  const metered = meteredText(s.metered);
  if (metered) parts.push(metered);
  if (s.programs?.unreadable) parts.push("the running programs cannot be read here: farmhand.pauseWhileRunning does nothing");
  return parts.length ? parts.join(" · ") : undefined;
}

function meteredText(m: Sensing["metered"]): string | undefined {
  if (!m) return undefined;
  if (m.source === null) return "metered connections are not sensed on this machine";
  if (m.metered !== true) return undefined;
  if (m.leftBytes === undefined || m.leftBytes <= 0) return `metered connection (${m.source}): no job downloads left today`;
  return `metered connection (${m.source}): jobs may download ${megabytes(m.leftBytes)} more today (of ${megabytes(m.limitBytes)})`;
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
