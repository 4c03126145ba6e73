import { LineAsker, spawnPowerShell, type LineProcess } from "../powerShell";
import { IdleSourceError, type IdleReading, type IdleSource } from "./idleSource";

export type { LineProcess } from "../powerShell";

/**
 * Windows: GetLastInputInfo through ONE long-lived PowerShell process (never a process per poll). Each read writes a
 * line to its stdin; it answers one line `farmhand-idle <ms> <locked 0|1> <fullscreen 0|1>`. A locked workstation is
 * seen as the input desktop being out of reach (OpenInputDesktop fails while the secure desktop — lock screen, UAC —
 * has the input); a fullscreen application, a Direct3D game or presentation mode as SHQueryUserNotificationState's
 * "busy" states (2, 3, 4), the ones Windows itself holds notifications back for.
 */
export const WINDOWS_IDLE_SCRIPT = `
$ErrorActionPreference = 'Stop'
Add-Type -TypeDefinition @'
using System;
using System.Runtime.InteropServices;
public static class FarmhandIdle {
  [StructLayout(LayoutKind.Sequential)] struct LASTINPUTINFO { public uint cbSize; public uint dwTime; }
  [DllImport("user32.dll")] static extern bool GetLastInputInfo(ref LASTINPUTINFO info);
  [DllImport("kernel32.dll")] static extern uint GetTickCount();
  [DllImport("user32.dll")] static extern IntPtr OpenInputDesktop(uint flags, bool inherit, uint access);
  [DllImport("user32.dll")] static extern bool CloseDesktop(IntPtr desktop);
  [DllImport("shell32.dll")] static extern int SHQueryUserNotificationState(out int state);
  public static string Read() {
    LASTINPUTINFO info = new LASTINPUTINFO();
    info.cbSize = (uint)Marshal.SizeOf(info);
    if (!GetLastInputInfo(ref info)) return "farmhand-idle-error GetLastInputInfo failed";
    uint idle = unchecked(GetTickCount() - info.dwTime);
    IntPtr desktop = OpenInputDesktop(0, false, 0x0100);
    bool locked = desktop == IntPtr.Zero;
    if (!locked) CloseDesktop(desktop);
    int notification;
    bool fullscreen = SHQueryUserNotificationState(out notification) == 0 && notification >= 2 && notification <= 4;
    return "farmhand-idle " + idle + " " + (locked ? "1" : "0") + " " + (fullscreen ? "1" : "0");
  }
}
'@
[Console]::Out.WriteLine('farmhand-idle-ready')
while ($null -ne ($line = [Console]::In.ReadLine())) { [Console]::Out.WriteLine([FarmhandIdle]::Read()) }
`;

/** One answer line → a reading; anything else PowerShell printed (banners, warnings) is not an answer. */
export function parseWindowsIdleLine(line: string): IdleReading | { error: string } | undefined {
  const text = line.trim();
  const answer = /^farmhand-idle (\d+) ([01])(?: ([01]))?$/.exec(text);
  if (answer) return { idleMs: Number(answer[1]), locked: answer[2] === "1", ...(answer[3] === "1" ? { fullscreen: true } : {}) };
  const error = /^farmhand-idle-error (.*)$/.exec(text);
  return error ? { error: error[1] } : undefined;
}

export class WindowsIdleSource implements IdleSource {
  readonly name = "Windows GetLastInputInfo (PowerShell)";
  readonly fastPollMs = 500;
  private readonly asker: LineAsker;

  constructor(start: () => LineProcess = () => spawnPowerShell(WINDOWS_IDLE_SCRIPT)) {
    this.asker = new LineAsker(start, (why) => new IdleSourceError(why));
  }

  read(): Promise<IdleReading> {
    return this.asker.ask("read", (line) => {
      const answer = parseWindowsIdleLine(line);
      return answer === undefined || "error" in answer ? answer : { value: answer };
    });
  }

  dispose(): void {
    this.asker.dispose();
  }
}
