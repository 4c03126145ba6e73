import { insideWindows, type TimeWindow } from "./timeWindows";

/** Everything the policy needs to know at one moment; gathered by probes, fed in by the extension. */
export type PolicyInputs = {
  now: number;
  wanted: boolean;
  snoozedUntil?: number;
  remoteWindow: boolean;
  allowRemote: boolean;
  /** Another VS Code window on this machine already donates (one donor per machine). */
  otherWindowDonates: boolean;
  windows: readonly TimeWindow[];
  /** Time-window entries that could not be read: a schedule that cannot be read never donates. */
  windowProblems?: readonly string[];
  onBattery: boolean | undefined;
  donateOnBattery: boolean;
  /** Milliseconds since the user last typed or clicked (the lesser of VS Code's and the OS's, where known). */
  userIdleMs: number;
  idleMinutes: number;
  /** The machine-wide idle source says the screen is locked: the owner is away, however recently they typed. */
  screenLocked?: boolean;
  /** The load gate's verdict: other programs keep the CPU busy. */
  cpuBusy: boolean;
  otherCpuLoad?: number;
  /** The heat gate's verdict (farmhand.maxCpuTemperatureC, with hysteresis), and what it read. */
  tooHot?: boolean;
  cpuCelsius?: number;
  maxCpuCelsius?: number;
  /** farmhand.quietHours: inside them donating goes on with one job at a time. */
  quietHours?: readonly TimeWindow[];
  /** The battery's charge (percent; undefined: no battery, or not readable) and farmhand.minBatteryPercent (0: none). */
  batteryPercent?: number;
  minBatteryPercent?: number;
  /** A program of farmhand.pauseWhileRunning that runs now, as the donor wrote it. */
  exclusiveProgram?: string;
  /** On a metered connection: farmhand.meteredLimitMB in bytes, and what jobs brought down today. Absent: not metered (or not known). */
  metered?: { limitBytes: number; usedBytes: number };
};

/** Why the policy holds donating back, as a code: what the surfaces offer to lift it depends on it, never on the text. */
export type PauseCause =
  | "snoozed"
  | "remoteWindow"
  | "otherWindow"
  | "timeWindowsUnreadable"
  | "outsideTimeWindows"
  | "onBattery"
  | "lowBattery"
  | "userActive"
  | "cpuBusy"
  | "tooHot"
  | "exclusiveApp"
  | "metered";

export type PolicyDecision =
  /** `quietHours`: inside farmhand.quietHours, one job at a time. */
  | { donate: true; quietHours?: true }
  | { donate: false; off: true }
  | { donate: false; off?: false; reason: string; cause: PauseCause; until?: number };

/**
 * The pauses that mean the machine's owner is back (at the keyboard, running their own programs, unplugged): with
 * the light and medium presets the engine freezes running jobs for these, instead of letting them run on at the
 * lowest priority. A snooze, a time window or another window donating keep their old meaning.
 */
export function ownerIsBack(decision: PolicyDecision): boolean {
  return !decision.donate && "cause" in decision && (decision.cause === "userActive" || decision.cause === "cpuBusy" || decision.cause === "onBattery");
}

/**
 * Whether running jobs are frozen for this pause: always for heat (a job that runs on, however low its priority,
 * keeps the CPU hot and the fans loud) and for a program the donor named (a game or a call wants the whole machine),
 * and for the owner's return when the preset says so.
 */
export function freezesJobs(decision: PolicyDecision, suspendOnReturn: boolean): boolean {
  const cause = !decision.donate && "cause" in decision ? decision.cause : undefined;
  return cause === "tooHot" || cause === "exclusiveApp" || (suspendOnReturn && ownerIsBack(decision));
}

/** Decide whether to donate now, and if not, the one reason a donor should see (most actionable first). */
export function decide(p: PolicyInputs): PolicyDecision {
  if (!p.wanted) return { donate: false, off: true };
  if (p.snoozedUntil !== undefined && p.snoozedUntil > p.now) {
    return { donate: false, reason: `snoozed until ${clock(p.snoozedUntil)}`, cause: "snoozed", until: p.snoozedUntil };
  }
  if (p.remoteWindow && !p.allowRemote) {
    return { donate: false, reason: "remote window (farmhand.allowRemoteDonation is off)", cause: "remoteWindow" };
  }
  if (p.otherWindowDonates) return { donate: false, reason: "another VS Code window on this machine is donating", cause: "otherWindow" };
  if (p.windowProblems?.length) {
    return { donate: false, reason: `time window not understood: ${p.windowProblems.join("; ")}`, cause: "timeWindowsUnreadable" };
  }
  if (!insideWindows(p.windows, new Date(p.now))) return { donate: false, reason: "outside the donation time windows", cause: "outsideTimeWindows" };
  if (p.onBattery && !p.donateOnBattery) return { donate: false, reason: "on battery power", cause: "onBattery" };
  if (p.minBatteryPercent && p.batteryPercent !== undefined && p.batteryPercent < p.minBatteryPercent) {
    return { donate: false, reason: `battery at ${Math.round(p.batteryPercent)} %: donates from ${p.minBatteryPercent} %, so it charges first`, cause: "lowBattery" };
  }
  if (p.tooHot) {
    const reading = p.cpuCelsius === undefined ? "the system limits the CPU for heat" : `the CPU is at ${Math.round(p.cpuCelsius)} °C`;
    const limit = p.maxCpuCelsius ? ` (limit ${p.maxCpuCelsius} °C, resumes below ${p.maxCpuCelsius - 5} °C)` : "";
    return { donate: false, reason: `too hot: ${reading}${limit}`, cause: "tooHot" };
  }
  if (p.exclusiveProgram !== undefined) return { donate: false, reason: `${p.exclusiveProgram} is running`, cause: "exclusiveApp" };
  if (p.metered && p.metered.usedBytes >= p.metered.limitBytes) {
    const why = p.metered.limitBytes <= 0 ? "no job downloads allowed" : `today's ${megabytes(p.metered.limitBytes)} for jobs is used`;
    return { donate: false, reason: `metered connection: ${why}`, cause: "metered" };
  }
  const idleNeeded = p.idleMinutes * 60_000;
  if (p.userIdleMs < idleNeeded && !p.screenLocked) {
    return {
      donate: false,
      reason: `you are using the computer (starts after ${p.idleMinutes} idle min)`,
      cause: "userActive",
      until: p.now + (idleNeeded - p.userIdleMs),
    };
  }
  if (p.cpuBusy) {
    const load = p.otherCpuLoad === undefined ? "" : ` (${Math.round(p.otherCpuLoad * 100)} % CPU)`;
    return { donate: false, reason: `other programs are busy${load}`, cause: "cpuBusy" };
  }
  if (p.quietHours?.length && insideWindows(p.quietHours, new Date(p.now))) return { donate: true, quietHours: true };
  return { donate: true };
}

/** Bytes as the donor set them (farmhand.meteredLimitMB): "10 MB", "2.5 MB". */
export function megabytes(bytes: number): string {
  const mb = bytes / 1_000_000;
  if (mb < 0.1) return `${Math.round(bytes / 1_000)} kB`;
  return `${mb >= 10 || Number.isInteger(mb) ? Math.round(mb) : mb.toFixed(1)} MB`;
}

function clock(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}
