import { join } from "node:path";
import { listDir as list, readText, runQuiet as run } from "../worker/quietReads";

/**
 * How hot the CPU runs. Linux: the hottest CPU sensor in hwmon (coretemp, k10temp, …), else the CPU-like thermal
 * zones. macOS gives no temperature without privileges; `pmset -g therm` says whether the system limits the CPU for
 * heat, which is the same verdict. Windows offers nothing cheap (WMI's MSAcpi_ThermalZoneTemperature needs an
 * administrator and is missing on most machines), so there the limit is not applied.
 */
export type ThermalReading = { celsius?: number; throttled?: boolean };

/** hwmon drivers that measure the CPU package or its cores. */
const CPU_HWMON = /^(coretemp|k10temp|zenpower|cpu_thermal|cpu-thermal|soc_thermal|acpitz|nct\d+|it\d+)$/i;
/** Thermal zones that are the CPU (not the battery, the Wi-Fi card or the chipset). */
const CPU_ZONE = /x86_pkg_temp|cpu|soc|acpitz|tcpu|core/i;

export async function readThermal(platform = process.platform, sysClass = "/sys/class"): Promise<ThermalReading | undefined> {
  if (platform === "linux") {
    const celsius = (await hottestHwmon(join(sysClass, "hwmon"))) ?? (await hottestZone(join(sysClass, "thermal")));
    return celsius === undefined ? undefined : { celsius };
  }
  if (platform === "darwin") return parsePmsetTherm(await run("pmset", ["-g", "therm"]));
  return undefined;
}

/** The hottest input of the CPU hwmon chips, in °C. */
export async function hottestHwmon(root: string): Promise<number | undefined> {
  let hottest: number | undefined;
  for (const chip of await list(root)) {
    const name = (await readText(join(root, chip, "name")))?.trim();
    if (!name || !CPU_HWMON.test(name)) continue;
    for (const file of await list(join(root, chip))) {
      if (!/^temp\d+_input$/.test(file)) continue;
      hottest = max(hottest, milliCelsius(await readText(join(root, chip, file))));
    }
  }
  return hottest;
}

/** The hottest CPU-like thermal zone, in °C. */
export async function hottestZone(root: string): Promise<number | undefined> {
  let hottest: number | undefined;
  for (const zone of await list(root)) {
    if (!zone.startsWith("thermal_zone")) continue;
    const type = (await readText(join(root, zone, "type")))?.trim();
    if (!type || !CPU_ZONE.test(type)) continue;
    hottest = max(hottest, milliCelsius(await readText(join(root, zone, "temp"))));
  }
  return hottest;
}

/**
 * `pmset -g therm`: "CPU_Speed_Limit = 100" (percent the system allows) and thermal warning levels; "No thermal
 * warning level has been recorded" when all is well. Limited below 100 %, or any warning level: throttled.
 */
export function parsePmsetTherm(out: string | undefined): ThermalReading | undefined {
  if (!out) return undefined;
  const speed = /CPU_Speed_Limit\s*=\s*(\d+)/.exec(out);
  const warning = /thermal warning level (?:has been set to|is|=|:)\s*(\d+)/i.exec(out);
  const noWarning = /No thermal warning level has been recorded/i.test(out);
  if (!speed && !warning && !noWarning) return undefined;
  return { throttled: (speed !== null && Number(speed[1]) < 100) || (warning !== null && Number(warning[1]) > 0) };
}

/**
 * Hot above the limit, cool again only below the limit minus the hysteresis: a CPU hovering at the limit does not
 * freeze and thaw the jobs every few seconds. A limit of 0 turns the check off.
 */
export class HeatGate {
  private hot = false;

  constructor(
    private limitC: number,
    private readonly hysteresisC = 5,
  ) {}

  configure(limitC: number): void {
    this.limitC = limitC;
    if (limitC <= 0) this.hot = false;
  }

  get limit(): number {
    return this.limitC;
  }

  get tooHot(): boolean {
    return this.hot;
  }

  update(reading: ThermalReading | undefined): boolean {
    if (this.limitC <= 0) return (this.hot = false);
    if (!reading) return this.hot; // a reading that failed once says nothing new
    if (reading.celsius !== undefined) {
      if (reading.celsius > this.limitC) this.hot = true;
      else if (reading.celsius < this.limitC - this.hysteresisC) this.hot = false;
    } else if (reading.throttled !== undefined) {
      this.hot = reading.throttled;
    }
    return this.hot;
  }
}

/** A sysfs temperature in millidegrees; garbage and impossible values (sensors report -273 or 255 °C when absent) are no reading. */
function milliCelsius(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?\d+\s*$/.test(text)) return undefined;
  const celsius = Number(text) / 1000;
  return celsius > 0 && celsius < 150 ? celsius : undefined;
}

function max(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}


/** Reads the temperature on its own timer, one read at a time, and says when the gate's verdict changes. */
export class HeatWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private busy = false;
  private reading: ThermalReading | undefined;

  constructor(
    private readonly gate: HeatGate,
    private readonly onChange: (tooHot: boolean) => void,
    private readonly everyMs: number,
    private readonly read: () => Promise<ThermalReading | undefined> = () => readThermal(),
  ) {}

  get latest(): ThermalReading | undefined {
    return this.reading;
  }

  /** It has read at least once: a `latest` still undefined means this machine gives no reading. */
  readOnce = false;

  start(): void {
    if (!this.timer && !this.busy && !this.stopped) void this.poll();
  }

  dispose(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    this.busy = true;
    const reading = await this.read();
    this.busy = false;
    this.readOnce = true;
    if (this.stopped) return;
    this.reading = reading ?? this.reading;
    const before = this.gate.tooHot;
    if (this.gate.update(reading) !== before) this.onChange(this.gate.tooHot);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, this.everyMs);
  }
}
