import { describe, expect, it } from "vitest";
import { decide, freezesJobs, ownerIsBack, type PauseCause, type PolicyInputs } from "../../../extension/policy/policy";
import { parseTimeWindow } from "../../../extension/policy/timeWindows";
import { concurrencyFor, PRESETS } from "../../../extension/policy/presets";
import { policyInputs } from "./inputs";

const base = policyInputs();
const NOW = base.now;

describe("policy", () => {
  it("donates when wanted and nothing stands in the way", () => {
    expect(decide(base)).toEqual({ donate: true });
  });

  it("is off, without a pause reason, when the donor has not asked to donate", () => {
    expect(decide({ ...base, wanted: false })).toEqual({ donate: false, off: true });
  });

  it.each<[string, Partial<PolicyInputs>, RegExp, PauseCause, boolean]>([
    ["snooze", { snoozedUntil: NOW + 3_600_000 }, /snoozed until 15:00/, "snoozed", false],
    ["remote window", { remoteWindow: true }, /remote window/, "remoteWindow", false],
    ["another window", { otherWindowDonates: true }, /another VS Code window/, "otherWindow", false],
    ["unreadable time window", { windowProblems: ['"weekdays 9-5" is not a time window'] }, /^time window not understood: "weekdays 9-5"/, "timeWindowsUnreadable", false],
    ["time windows", { windows: [(parseTimeWindow("Sat,Sun") as { ok: true; window: never }).window] }, /outside/, "outsideTimeWindows", false],
    ["battery", { onBattery: true }, /battery/, "onBattery", true],
    ["user active", { userIdleMs: 60_000 }, /using the computer/, "userActive", true],
    ["busy CPU", { cpuBusy: true, otherCpuLoad: 0.87 }, /other programs are busy \(87 % CPU\)/, "cpuBusy", true],
    ["heat", { tooHot: true, cpuCelsius: 91.4, maxCpuCelsius: 85 }, /^too hot: the CPU is at 91 °C \(limit 85 °C, resumes below 80 °C\)$/, "tooHot", false],
    ["heat on macOS", { tooHot: true }, /^too hot: the system limits the CPU for heat$/, "tooHot", false],
    ["battery charge", { batteryPercent: 42.4, minBatteryPercent: 90 }, /^battery at 42 %: donates from 90 %, so it charges first$/, "lowBattery", false],
    ["a program the donor named", { exclusiveProgram: "steam" }, /^steam is running$/, "exclusiveApp", false],
    ["metered, allowance used", { metered: { limitBytes: 10_000_000, usedBytes: 10_400_000 } }, /^metered connection: today's 10 MB for jobs is used$/, "metered", false],
    ["metered, nothing allowed", { metered: { limitBytes: 0, usedBytes: 0 } }, /^metered connection: no job downloads allowed$/, "metered", false],
  ])("pauses with a reason and its cause: %s", (_name, change, reason, cause, ownerBack) => {
    const decision = decide({ ...base, ...change });
    expect(decision.donate).toBe(false);
    expect("reason" in decision && decision.reason).toMatch(reason);
    expect(decision).toMatchObject({ cause });
    // only the owner's return freezes running jobs; a snooze or a time window keeps its old meaning
    expect(ownerIsBack(decision)).toBe(ownerBack);
  });

  it("takes jobs on a metered connection while some of the day's allowance is left, and on AC at or above the battery threshold", () => {
    expect(decide({ ...base, metered: { limitBytes: 10_000_000, usedBytes: 9_999_999 } })).toEqual({ donate: true });
    expect(decide({ ...base, batteryPercent: 90, minBatteryPercent: 90 })).toEqual({ donate: true });
    expect(decide({ ...base, batteryPercent: 10, minBatteryPercent: 0 })).toEqual({ donate: true }); // no threshold
    expect(decide({ ...base, minBatteryPercent: 90 })).toEqual({ donate: true }); // no battery
  });

  it("freezes running jobs while a named program runs, whatever the preset; battery charge and metered only take nothing new", () => {
    expect(freezesJobs(decide({ ...base, exclusiveProgram: "obs" }), false)).toBe(true);
    expect(freezesJobs(decide({ ...base, batteryPercent: 20, minBatteryPercent: 90 }), true)).toBe(false);
    expect(freezesJobs(decide({ ...base, metered: { limitBytes: 0, usedBytes: 0 } }), true)).toBe(false);
  });

  it("is not the owner's return when donating is off or allowed", () => {
    expect(ownerIsBack(decide({ ...base, wanted: false }))).toBe(false);
    expect(ownerIsBack(decide(base))).toBe(false);
  });

  it("never donates on a schedule it cannot read, even beside a window that would allow now", () => {
    const anyTime = (parseTimeWindow("daily") as { ok: true; window: never }).window;
    expect(decide({ ...base, windows: [anyTime], windowProblems: ["x"] }).donate).toBe(false);
    expect(decide({ ...base, windows: [], windowProblems: [] }).donate).toBe(true);
  });

  it("lets each guard be waived by its setting", () => {
    expect(decide({ ...base, remoteWindow: true, allowRemote: true }).donate).toBe(true);
    expect(decide({ ...base, onBattery: true, donateOnBattery: true }).donate).toBe(true);
    expect(decide({ ...base, userIdleMs: 0, idleMinutes: 0 }).donate).toBe(true);
    expect(decide({ ...base, snoozedUntil: NOW - 1 }).donate).toBe(true);
    expect(decide({ ...base, onBattery: undefined }).donate).toBe(true); // unknown battery state: not a reason
  });

  it("freezes jobs for heat whatever the preset; for the owner's return only where the preset says", () => {
    const hot = decide({ ...base, tooHot: true, cpuCelsius: 90, maxCpuCelsius: 85 });
    expect(freezesJobs(hot, false)).toBe(true);
    expect(freezesJobs(hot, true)).toBe(true);
    const back = decide({ ...base, userIdleMs: 0 });
    expect(freezesJobs(back, true)).toBe(true);
    expect(freezesJobs(back, false)).toBe(false);
    expect(freezesJobs(decide({ ...base, snoozedUntil: NOW + 1_000 }), true)).toBe(false);
    expect(freezesJobs(decide(base), true)).toBe(false);
  });

  it("counts a locked screen as away, however recently the donor typed", () => {
    expect(decide({ ...base, userIdleMs: 1_000, screenLocked: true }).donate).toBe(true);
    expect(decide({ ...base, userIdleMs: 1_000, screenLocked: false })).toMatchObject({ donate: false, cause: "userActive" });
  });

  it("says when an idle wait ends", () => {
    const decision = decide({ ...base, userIdleMs: 4 * 60_000 });
    expect(decision).toMatchObject({ donate: false, until: NOW + 60_000 });
  });

  it("names the most actionable reason first when several apply", () => {
    const decision = decide({ ...base, snoozedUntil: NOW + 1000, onBattery: true, cpuBusy: true });
    expect("reason" in decision && decision.reason).toMatch(/snoozed/);
  });
});

describe("presets", () => {
  it("scale concurrency with the machine and never drop below one job", () => {
    expect(concurrencyFor(PRESETS.light.coreShare, 2)).toBe(1);
    expect(concurrencyFor(PRESETS.medium.coreShare, 8)).toBe(4);
    expect(concurrencyFor(PRESETS.full.coreShare, 8)).toBe(8);
    expect(concurrencyFor(5, 4)).toBe(4);
    expect(concurrencyFor(-1, 4)).toBe(1);
  });

  it("get more generous from light to full", () => {
    expect(PRESETS.light.coreShare).toBeLessThan(PRESETS.medium.coreShare);
    expect(PRESETS.medium.coreShare).toBeLessThan(PRESETS.full.coreShare);
    expect(PRESETS.light.idleMinutes).toBeGreaterThan(PRESETS.full.idleMinutes);
  });
});
