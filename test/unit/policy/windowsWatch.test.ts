import { describe, expect, it } from "vitest";
import type { LineProcess } from "../../../extension/policy/powerShell";
import { parseCostLine, parseProcessesLine, WINDOWS_WATCH_SCRIPT, WindowsWatch } from "../../../extension/policy/windowsWatch";

/** A PowerShell stand-in: answers each line written with the next recorded line(s). */
function recordedPowerShell(script: string[][]): LineProcess & { written: string[] } {
  let onLine: (line: string) => void = () => undefined;
  let next = 0;
  const p = {
    written: [] as string[],
    write(line: string) {
      p.written.push(line);
      const lines = script[next++] ?? [];
      queueMicrotask(() => lines.forEach((l) => onLine(l)));
    },
    onLine: (l: (line: string) => void) => void (onLine = l),
    onExit: () => undefined,
    kill: () => undefined,
  };
  return p;
}

describe("Windows: programs and the connection's cost from one long-lived PowerShell", () => {
  it("reads the process names (without .exe, `/`-separated: no file name holds a `/`)", () => {
    expect(parseProcessesLine("farmhand-processes explorer/steam/obs64/Zoom Meetings\r")).toEqual({ value: ["explorer", "steam", "obs64", "Zoom Meetings"] });
    expect(parseProcessesLine("farmhand-processes")).toEqual({ value: [] });
    expect(parseProcessesLine("farmhand-watch-error Access denied")).toEqual({ error: "Access denied" });
    expect(parseProcessesLine("farmhand-watch-ready")).toBeUndefined();
    expect(parseProcessesLine("farmhand-cost Unrestricted 0 0")).toBeUndefined();
  });

  it("reads the cost: a data plan (Fixed, Variable), roaming or over the limit is metered; Unrestricted is not; Unknown is not known", () => {
    expect(parseCostLine("farmhand-cost Unrestricted 0 0")).toEqual({ value: false });
    expect(parseCostLine("farmhand-cost Fixed 0 0")).toEqual({ value: true });
    expect(parseCostLine("farmhand-cost Variable 0 0\r")).toEqual({ value: true });
    expect(parseCostLine("farmhand-cost Unrestricted 1 0")).toEqual({ value: true });
    expect(parseCostLine("farmhand-cost Unknown 0 1")).toEqual({ value: true });
    expect(parseCostLine("farmhand-cost Unknown 0 0")).toEqual({ value: undefined });
    expect(parseCostLine("farmhand-cost none")).toEqual({ value: false });
    expect(parseCostLine("farmhand-cost Fixed yes")).toBeUndefined();
  });

  it("the script answers both questions in one loop over stdin, through WinRT's NetworkInformation", () => {
    expect(WINDOWS_WATCH_SCRIPT).toMatch(/ReadLine\(\)/);
    expect(WINDOWS_WATCH_SCRIPT).toMatch(/Get-Process/);
    expect(WINDOWS_WATCH_SCRIPT).toMatch(/GetInternetConnectionProfile\(\)/);
    expect(WINDOWS_WATCH_SCRIPT).toMatch(/GetConnectionCost\(\)/);
  });

  it("asks one PowerShell both questions, skipping its banner, and knows nothing once it failed", async () => {
    const ps = recordedPowerShell([["Windows PowerShell", "farmhand-watch-ready", "farmhand-processes steam/explorer"], ["farmhand-cost Fixed 0 0"], ["farmhand-watch-error boom"]]);
    let started = 0;
    const watch = new WindowsWatch(() => (started++, ps));
    expect(await watch.processNames()).toEqual(["steam", "explorer"]);
    expect(await watch.metered()).toBe(true);
    expect(await watch.metered()).toBeUndefined(); // the script's own error: not known this time
    expect(started).toBe(1);
    expect(ps.written).toEqual(["processes", "cost", "cost"]);
    watch.dispose();
    expect(await watch.processNames()).toBeUndefined();
  });
});
