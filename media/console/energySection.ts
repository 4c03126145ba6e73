import type { ConsoleEnergy } from "../../extension/protocol/consoleProtocol";
import { el, table } from "./dom";

/** Joules as kWh for the console: three decimals below 1 kWh (a job's worth), one above. */
export function kwh(joules: number): string {
  const k = joules / 3_600_000;
  return `${k >= 1 ? k.toFixed(1) : k.toFixed(3)} kWh`;
}

/**
 * The Overview's energy section: what the donors' machines spent on the farm's jobs this week (UTC, from Monday),
 * per donor, and per job type all time. Measured where a donor's CPU energy counter is readable, else estimated from
 * CPU time: the figures say what the donors reported.
 */
export function energySection(energy: ConsoleEnergy | undefined, parts: Node[]): void {
  if (!energy) return;
  parts.push(
    el("h2", `Energy given: ${kwh(energy.weekTotalJ)} this week`, { id: "energy-heading" }),
    el("p", "As the donors' machines report it: measured by the CPU's energy counter where it can be read, else estimated from CPU time.", { class: "label" }),
  );
  if (energy.byType.length === 0 && energy.weekByDonor.length === 0) return void parts.push(el("p", "No energy reported yet.", { id: "energy-none" }));
  const donors = energy.weekByDonor.map((d) => [d.name, kwh(d.energyJ), String(d.jobs)]);
  const types = energy.byType.map((t) => [t.type, kwh(t.energyJ), String(t.reports)]);
  parts.push(
    table(["Donor (this week)", "Energy", "Jobs"], donors.length ? donors : [["nobody this week", "", ""]], { id: "energy-donors" }),
    table(["Job type (all time)", "Energy", "Attempts"], types.length ? types : [["none yet", "", ""]], { id: "energy-types" }),
  );
}
