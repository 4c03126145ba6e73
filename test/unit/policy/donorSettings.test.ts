import { describe, expect, it } from "vitest";
import { parseTimeWindows, resolveDonorSettings } from "../../../extension/policy/donorSettings";
import { decide } from "../../../extension/policy/policy";
import { policyInputs } from "./inputs";

// 2026-11-16 is a Monday; local time.
const mondayNoon = new Date(2026, 10, 16, 12, 0).getTime();
const inputs = (now: number) => policyInputs({ now });

describe("donor settings as VS Code hands them over", () => {
  it("takes farmhand.timeWindows all the way to the policy's decision", () => {
    const settings = resolveDonorSettings({ timeWindows: ["Sat,Sun", "Mon-Fri 18:00-08:00"] }, 4);
    expect(settings.windows.map((w) => w.source)).toEqual(["Sat,Sun", "Mon-Fri 18:00-08:00"]);
    expect(decide({ ...inputs(mondayNoon), windows: settings.windows })).toEqual({ donate: false, reason: "outside the donation time windows", cause: "outsideTimeWindows" });
    expect(decide({ ...inputs(mondayNoon + 7 * 3_600_000), windows: settings.windows })).toEqual({ donate: true }); // Monday 19:00
  });

  it("pauses on a window it cannot read, whatever the readable ones allow, saying which", () => {
    const settings = resolveDonorSettings({ timeWindows: ["daily", "weekdays 9-5"] }, 4);
    expect(decide({ ...inputs(mondayNoon), windows: settings.windows, windowProblems: settings.windowErrors })).toEqual({
      donate: false,
      reason: 'time window not understood: "weekdays 9-5" is not a time window like "Mon-Fri 18:00-08:00"',
      cause: "timeWindowsUnreadable",
    });
  });

  it("reports every unreadable window and keeps the readable ones", () => {
    expect(parseTimeWindows(["Sat", "Moonday", 7, "Mon 10:00-10:00"])).toMatchObject({
      windows: [{ source: "Sat" }],
      errors: [
        '"Moonday": "moonday" is not a day (use Mon, Tue, … Sun)',
        "7 is not text",
        '"Mon 10:00-10:00": the window starts and ends at the same time',
      ],
    });
    expect(parseTimeWindows("Sat")).toEqual({ windows: [], errors: ['farmhand.timeWindows must be a list of windows like "Mon-Fri 18:00-08:00"'] });
    expect(parseTimeWindows(undefined)).toEqual({ windows: [], errors: [] });
  });

  it("takes the CPU temperature limit from the preset (80/85/90 °C) unless set; 0 turns it off; garbage is ignored", () => {
    expect(["light", "medium", "full"].map((preset) => resolveDonorSettings({ preset }, 4).maxCpuTemperatureC)).toEqual([80, 85, 90]);
    expect(resolveDonorSettings({ preset: "light", maxCpuTemperatureC: 72 }, 4).maxCpuTemperatureC).toBe(72);
    expect(resolveDonorSettings({ maxCpuTemperatureC: 0 }, 4).maxCpuTemperatureC).toBe(0);
    expect(resolveDonorSettings({ maxCpuTemperatureC: -3 }, 4).maxCpuTemperatureC).toBe(85);
    expect(resolveDonorSettings({ maxCpuTemperatureC: "hot" }, 4).maxCpuTemperatureC).toBe(85);
  });

  it("takes farmhand.quietHours to a one-job decision inside them; an unreadable entry is reported, not a pause", () => {
    const settings = resolveDonorSettings({ quietHours: ["daily 11:00-13:00", "nightly"] }, 4);
    expect(settings.quietHours.map((w) => w.source)).toEqual(["daily 11:00-13:00"]);
    expect(settings.quietHoursErrors).toEqual(['"nightly": "nightly" is not a day (use Mon, Tue, … Sun)']);
    expect(settings.windowErrors).toEqual([]);
    expect(decide({ ...inputs(mondayNoon), quietHours: settings.quietHours })).toEqual({ donate: true, quietHours: true });
    expect(decide({ ...inputs(mondayNoon + 2 * 3_600_000), quietHours: settings.quietHours })).toEqual({ donate: true });
    expect(parseTimeWindows(7, "farmhand.quietHours").errors).toEqual(['farmhand.quietHours must be a list of windows like "Mon-Fri 18:00-08:00"']);
  });

  it("resolves the preset and lets single settings override it, ignoring malformed ones", () => {
    expect(resolveDonorSettings({}, 8)).toMatchObject({ preset: "medium", concurrency: 4, idleMinutes: 5, otherCpuThreshold: 0.5, donateOnBattery: false });
    expect(resolveDonorSettings({ preset: "full", idleMinutes: 2, otherCpuThresholdPercent: 150, maxConcurrentJobs: 3.7 }, 8)).toMatchObject({
      preset: "full",
      concurrency: 3,
      idleMinutes: 2,
      otherCpuThreshold: 1,
    });
    expect(resolveDonorSettings({ preset: "turbo", maxConcurrentJobs: 500, idleMinutes: -1, donateOnBattery: "yes" }, 2)).toMatchObject({
      preset: "medium",
      concurrency: 32,
      idleMinutes: 5,
      donateOnBattery: false,
    });
    expect(resolveDonorSettings({ maxConcurrentJobs: 0.5 }, 2).concurrency).toBe(1);
  });

  it("reads the program lists as written, once each (case-insensitively), reporting entries that are not program names", () => {
    const settings = resolveDonorSettings({ pauseWhileRunning: ["steam", " OBS ", "Steam", "", "C:\\Games\\game.exe", 7], pauseGpuWhileRunning: ["blender"] }, 4);
    expect(settings.pauseWhileRunning).toEqual(["steam", "OBS"]);
    expect(settings.pauseGpuWhileRunning).toEqual(["blender"]);
    expect(settings.programErrors).toEqual([
      'farmhand.pauseWhileRunning: "" is not a program name (the name a process list shows, without a folder)',
      'farmhand.pauseWhileRunning: "C:\\\\Games\\\\game.exe" is not a program name (the name a process list shows, without a folder)',
      "farmhand.pauseWhileRunning: 7 is not a program name (the name a process list shows, without a folder)",
    ]);
    expect(resolveDonorSettings({ pauseGpuWhileRunning: "steam" }, 4).programErrors).toEqual(['farmhand.pauseGpuWhileRunning must be a list of program names like "steam"']);
    expect(resolveDonorSettings({}, 4)).toMatchObject({ pauseWhileRunning: [], pauseGpuWhileRunning: [], programErrors: [] });
  });

  it("metered: 10 MB a day unless set (MB of 1,000,000 bytes), 0 allowed; garbage is the default", () => {
    expect(resolveDonorSettings({}, 4).meteredLimitBytes).toBe(10_000_000);
    expect(resolveDonorSettings({ meteredLimitMB: 2.5 }, 4).meteredLimitBytes).toBe(2_500_000);
    expect(resolveDonorSettings({ meteredLimitMB: 0 }, 4).meteredLimitBytes).toBe(0);
    expect(resolveDonorSettings({ meteredLimitMB: -1 }, 4).meteredLimitBytes).toBe(10_000_000);
    expect(resolveDonorSettings({ meteredLimitMB: "lots" }, 4).meteredLimitBytes).toBe(10_000_000);
  });

  it("battery charge: 90 % when donating on battery is allowed, else none, unless set; capped at 100", () => {
    expect(resolveDonorSettings({ donateOnBattery: true }, 4).minBatteryPercent).toBe(90);
    expect(resolveDonorSettings({}, 4).minBatteryPercent).toBe(0);
    expect(resolveDonorSettings({ minBatteryPercent: 40 }, 4).minBatteryPercent).toBe(40);
    expect(resolveDonorSettings({ donateOnBattery: true, minBatteryPercent: 0 }, 4).minBatteryPercent).toBe(0);
    expect(resolveDonorSettings({ minBatteryPercent: 250 }, 4).minBatteryPercent).toBe(100);
    expect(resolveDonorSettings({ donateOnBattery: true, minBatteryPercent: null }, 4).minBatteryPercent).toBe(90);
  });

  it("energy estimates: 10 W per core unless set to a positive number", () => {
    expect(resolveDonorSettings({}, 4).wattsPerCore).toBe(10);
    expect(resolveDonorSettings({ wattsPerCore: 4.5 }, 4).wattsPerCore).toBe(4.5);
    expect(resolveDonorSettings({ wattsPerCore: 0 }, 4).wattsPerCore).toBe(10);
  });

  it("freezes jobs for the owner's return with light and medium, not full; the suspend limit defaults to 10 minutes", () => {
    expect(resolveDonorSettings({ preset: "light" }, 4)).toMatchObject({ suspendOnReturn: true, suspendLimitMs: 10 * 60_000 });
    expect(resolveDonorSettings({ preset: "medium" }, 4)).toMatchObject({ suspendOnReturn: true });
    expect(resolveDonorSettings({ preset: "full" }, 4)).toMatchObject({ suspendOnReturn: false });
    expect(resolveDonorSettings({ suspendLimitMinutes: 2.5 }, 4).suspendLimitMs).toBe(150_000);
    expect(resolveDonorSettings({ suspendLimitMinutes: 0 }, 4).suspendLimitMs).toBe(0);
    // malformed: the default; absurdly long: a day
    expect(resolveDonorSettings({ suspendLimitMinutes: -3 }, 4).suspendLimitMs).toBe(10 * 60_000);
    expect(resolveDonorSettings({ suspendLimitMinutes: "soon" }, 4).suspendLimitMs).toBe(10 * 60_000);
    expect(resolveDonorSettings({ suspendLimitMinutes: 1e9 }, 4).suspendLimitMs).toBe(24 * 60 * 60_000);
  });
});
