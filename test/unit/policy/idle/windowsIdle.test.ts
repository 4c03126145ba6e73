import { afterEach, describe, expect, it, vi } from "vitest";
import { parseWindowsIdleLine, WindowsIdleSource, WINDOWS_IDLE_SCRIPT, type LineProcess } from "../../../../extension/policy/idle/windowsIdleSource";

/** A PowerShell stand-in: answers each `read` with the next recorded line(s). */
function recordedPowerShell(script: string[][]): LineProcess & { written: string[]; killed: boolean; exit(why: string): void } {
  let onLine: (line: string) => void = () => undefined;
  let onExit: (why: string) => void = () => undefined;
  let next = 0;
  const p = {
    written: [] as string[],
    killed: false,
    write(line: string) {
      p.written.push(line);
      const lines = script[next++] ?? [];
      queueMicrotask(() => lines.forEach((l) => onLine(l)));
    },
    onLine: (l: (line: string) => void) => void (onLine = l),
    onExit: (l: (why: string) => void) => void (onExit = l),
    kill: () => void (p.killed = true),
    exit: (why: string) => onExit(why),
  };
  return p;
}

describe("Windows idle answers", () => {
  it("reads idle milliseconds and the lock", () => {
    expect(parseWindowsIdleLine("farmhand-idle 73125 0\r")).toEqual({ idleMs: 73125, locked: false });
    expect(parseWindowsIdleLine("farmhand-idle 12 1")).toEqual({ idleMs: 12, locked: true });
  });

  it("reads a fullscreen application or presentation (SHQueryUserNotificationState's busy states)", () => {
    expect(parseWindowsIdleLine("farmhand-idle 600000 0 1")).toEqual({ idleMs: 600000, locked: false, fullscreen: true });
    expect(parseWindowsIdleLine("farmhand-idle 600000 0 0")).toEqual({ idleMs: 600000, locked: false });
    expect(WINDOWS_IDLE_SCRIPT).toMatch(/SHQueryUserNotificationState/);
  });

  it("passes the script's own error on, ignores PowerShell's other output", () => {
    expect(parseWindowsIdleLine("farmhand-idle-error GetLastInputInfo failed")).toEqual({ error: "GetLastInputInfo failed" });
    expect(parseWindowsIdleLine("farmhand-idle-ready")).toBeUndefined();
    expect(parseWindowsIdleLine("Windows PowerShell")).toBeUndefined();
    expect(parseWindowsIdleLine("farmhand-idle -5 0")).toBeUndefined();
    expect(parseWindowsIdleLine("farmhand-idle 5 2")).toBeUndefined();
  });

  it("the script asks GetLastInputInfo and the input desktop, and answers one line per line read", () => {
    expect(WINDOWS_IDLE_SCRIPT).toMatch(/GetLastInputInfo/);
    expect(WINDOWS_IDLE_SCRIPT).toMatch(/OpenInputDesktop/);
    expect(WINDOWS_IDLE_SCRIPT).toMatch(/ReadLine\(\)/);
  });
});

describe("one long-lived PowerShell", () => {
  afterEach(() => vi.useRealTimers());

  it("starts once and asks it a line per read", async () => {
    const ps = recordedPowerShell([["farmhand-idle-ready", "farmhand-idle 1500 0"], ["farmhand-idle 20 0"], ["WARNING: something", "farmhand-idle 30000 1"]]);
    let started = 0;
    const source = new WindowsIdleSource(() => (started++, ps));
    expect(await source.read()).toEqual({ idleMs: 1500, locked: false });
    expect(await source.read()).toEqual({ idleMs: 20, locked: false });
    expect(await source.read()).toEqual({ idleMs: 30000, locked: true });
    expect(started).toBe(1);
    expect(ps.written).toEqual(["read", "read", "read"]);
    source.dispose();
    expect(ps.killed).toBe(true);
  });

  it("fails for good when PowerShell exits or cannot start", async () => {
    const ps = recordedPowerShell([[]]);
    const source = new WindowsIdleSource(() => ps);
    const read = source.read();
    ps.exit("PowerShell could not start: spawn powershell.exe ENOENT");
    await expect(read).rejects.toThrow(/ENOENT/);
    await expect(source.read()).rejects.toThrow(/ENOENT/);
  });

  it("fails when the script reports an error, and when PowerShell does not answer in time", async () => {
    const failing = new WindowsIdleSource(() => recordedPowerShell([["farmhand-idle-error GetLastInputInfo failed"]]));
    await expect(failing.read()).rejects.toThrow(/GetLastInputInfo failed/);
    vi.useFakeTimers();
    const silent = recordedPowerShell([["garbage"]]);
    const source = new WindowsIdleSource(() => silent);
    const read = source.read();
    const settled = expect(read).rejects.toThrow(/did not answer/);
    await vi.advanceTimersByTimeAsync(5_000);
    await settled;
    expect(silent.killed).toBe(true);
  });
});
