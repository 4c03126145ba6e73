import { spawn } from "node:child_process";
import { IdleSourceError, type IdleReading, type IdleSource } from "./idleSource";

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

/** The piece of a child process this source uses, so tests can play recorded PowerShell output. */
export type LineProcess = {
  write(line: string): void;
  onLine(listener: (line: string) => void): void;
  onExit(listener: (why: string) => void): void;
  kill(): void;
};

function spawnPowerShell(): LineProcess {
  const child = spawn("powershell.exe", ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", WINDOWS_IDLE_SCRIPT], {
    windowsHide: true,
    stdio: ["pipe", "pipe", "ignore"],
  });
  child.unref();
  let rest = "";
  const listeners: Array<(line: string) => void> = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const lines = (rest + chunk).split(/\r?\n/);
    rest = lines.pop() ?? "";
    for (const line of lines) listeners.forEach((l) => l(line));
  });
  return {
    write: (line) => void child.stdin.write(line + "\n"),
    onLine: (l) => void listeners.push(l),
    onExit: (l) => {
      child.on("exit", (code, signal) => l(`PowerShell exited (${signal ?? code})`));
      child.on("error", (e) => l(`PowerShell could not start: ${e.message}`));
    },
    kill: () => void child.kill(),
  };
}

const READ_TIMEOUT_MS = 5_000;

export class WindowsIdleSource implements IdleSource {
  readonly name = "Windows GetLastInputInfo (PowerShell)";
  readonly fastPollMs = 500;
  private process: LineProcess | undefined;
  private exited: string | undefined;
  private readonly waiting: Array<{ resolve(r: IdleReading): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }> = [];

  constructor(private readonly start: () => LineProcess = spawnPowerShell) {}

  read(): Promise<IdleReading> {
    if (this.exited) return Promise.reject(new IdleSourceError(this.exited));
    const process = (this.process ??= this.launch());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.failAll(`PowerShell did not answer within ${READ_TIMEOUT_MS} ms`), READ_TIMEOUT_MS);
      this.waiting.push({ resolve, reject, timer });
      process.write("read");
    });
  }

  dispose(): void {
    this.process?.kill();
    this.failAll("disposed");
  }

  private launch(): LineProcess {
    const process = this.start();
    process.onLine((line) => {
      const answer = parseWindowsIdleLine(line);
      if (answer === undefined) return;
      const next = this.waiting.shift();
      if (!next) return;
      clearTimeout(next.timer);
      if ("error" in answer) next.reject(new IdleSourceError(answer.error));
      else next.resolve(answer);
    });
    process.onExit((why) => this.failAll(why));
    return process;
  }

  private failAll(why: string): void {
    this.exited ??= why;
    this.process?.kill();
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new IdleSourceError(why));
    }
  }
}
