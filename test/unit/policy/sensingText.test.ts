import { describe, expect, it } from "vitest";
import { sensingText } from "../../../extension/policy/sensingText";

describe("what the policy senses, in words", () => {
  it("names the idle source in use, or says VS Code activity alone judges idle", () => {
    expect(sensingText({ idleSource: "GNOME Mutter IdleMonitor (D-Bus)" })).toBe("idle read from GNOME Mutter IdleMonitor (D-Bus)");
    expect(sensingText({ idleSource: null })).toBe("idle is judged by VS Code activity only on this machine");
    expect(sensingText({ idleSource: undefined })).toBeUndefined();
  });

  it("shows the CPU temperature and the limit in force, and when heat froze the jobs", () => {
    expect(sensingText({ idleSource: undefined, thermal: { celsius: 61.6 }, maxCpuTemperatureC: 85 })).toBe("CPU 62 °C (limit 85 °C)");
    expect(sensingText({ idleSource: undefined, thermal: { celsius: 88 }, maxCpuTemperatureC: 85, tooHot: true })).toBe("CPU 88 °C: too hot, jobs frozen until below 80 °C");
    expect(sensingText({ idleSource: undefined, thermal: { celsius: 88 }, maxCpuTemperatureC: 0 })).toBe("CPU 88 °C, no limit");
    expect(sensingText({ idleSource: undefined, thermal: { throttled: true }, maxCpuTemperatureC: 85, tooHot: true })).toBe("macOS limits the CPU for heat: jobs frozen");
    expect(sensingText({ idleSource: undefined, maxCpuTemperatureC: 85, noThermalReading: true })).toBe("no CPU temperature readable on this machine: no heat limit");
  });

  it("says when quiet hours hold donating to one job, all on one line", () => {
    expect(sensingText({ idleSource: "X11 XScreenSaver", thermal: { celsius: 50 }, maxCpuTemperatureC: 80, quietHours: true })).toBe(
      "idle read from X11 XScreenSaver · CPU 50 °C (limit 80 °C) · quiet hours: one job at a time",
    );
  });

  it("says how much a metered connection still allows jobs today, that it is used up, or that this platform does not say", () => {
    const metered = (m: { source: string | null; metered?: boolean; leftBytes?: number; limitBytes: number }) => sensingText({ idleSource: undefined, metered: m });
    expect(metered({ source: "NetworkManager", metered: true, leftBytes: 7_500_000, limitBytes: 10_000_000 })).toBe(
      "metered connection (NetworkManager): jobs may download 7.5 MB more today (of 10 MB)",
    );
    expect(metered({ source: "NetworkManager", metered: true, leftBytes: 40_000, limitBytes: 10_000_000 })).toBe(
      "metered connection (NetworkManager): jobs may download 40 kB more today (of 10 MB)",
    );
    expect(metered({ source: "the Windows connection cost", metered: true, leftBytes: 0, limitBytes: 0 })).toBe("metered connection (the Windows connection cost): no job downloads left today");
    expect(metered({ source: "NetworkManager", metered: false, limitBytes: 10_000_000 })).toBeUndefined();
    expect(metered({ source: "NetworkManager", limitBytes: 10_000_000 })).toBeUndefined();
    expect(metered({ source: null, limitBytes: 10_000_000 })).toBe("metered connections are not sensed on this machine");
  });

  it("says when the program lists cannot work because this machine's processes cannot be read", () => {
    expect(sensingText({ idleSource: undefined, programs: { unreadable: true } })).toBe("the running programs cannot be read here: farmhand.pauseWhileRunning does nothing");
    expect(sensingText({ idleSource: undefined, programs: { unreadable: false, gpuProgram: "obs" } })).toBeUndefined();
  });
});
