import { execFile, spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Real desktop pieces for the idle tests: an X server (Xvfb), a session bus, a stand-in desktop on that bus. */

const started: ChildProcess[] = [];

/** The first line a child prints on stdout (its display number, its bus address, "ready"). */
function firstLine(child: ChildProcess, what: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing within ${timeoutMs} ms`)), timeoutMs);
    lines.once("line", (line) => {
      clearTimeout(timer);
      lines.close();
      resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before it was ready`)));
    child.once("error", (e) => reject(new Error(`${what} could not start: ${e.message} (installed by .ci/ensure.mjs)`)));
  });
}

function track(child: ChildProcess): ChildProcess {
  started.push(child);
  return child;
}

/**
 * Xvfb on a display it picks itself (-displayfd): never one in use. -noreset: without it the server starts afresh
 * (idle counter and all) each time its last client leaves — every xprintidle would read "just now".
 */
export async function startXvfb(): Promise<string> {
  const child = track(spawn("Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0", "640x480x24"], { stdio: ["ignore", "pipe", "ignore"] }));
  return `:${await firstLine(child, "Xvfb")}`;
}

export async function startSessionBus(): Promise<{ address: string; pid: number }> {
  const child = track(spawn("dbus-daemon", ["--session", "--print-address", "--nofork"], { stdio: ["ignore", "pipe", "ignore"] }));
  return { address: await firstLine(child, "dbus-daemon"), pid: child.pid! };
}

export type DesktopState = { lastInputAt: number; locked?: boolean; idleHint?: boolean; idleSince?: number; metered?: number };

/** A stand-in desktop exporting the given services on the bus; its answers come from `state` (rewritten by the test). */
export async function startStandIn(address: string, dir: string, services: Array<"mutter" | "freedesktop" | "logind" | "networkmanager">, state: DesktopState) {
  const stateFile = join(dir, `state-${services.join("-")}.json`);
  const set = (s: DesktopState) => writeFileSync(stateFile, JSON.stringify(s));
  set(state);
  // Debian's python3 with python3-gi (installed by .ci/ensure.mjs), not whatever python3 is first on PATH.
  const child = track(spawn("/usr/bin/python3", [join(__dirname, "idleStandIn.py"), address, stateFile, services.join(",")], { stdio: ["ignore", "pipe", "inherit"] }));
  await firstLine(child, "the stand-in desktop");
  return { set, stop: () => stopChild(child) };
}

/** Run an X11 tool (xwininfo, xprop) on the display; resolves with what it printed. */
export function output(command: string, args: string[], display: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env: { ...process.env, DISPLAY: display } }, (error, stdout) => (error ? reject(new Error(`${command}: ${error.message}`)) : resolve(stdout)));
  });
}

export function xdotool(display: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("xdotool", args, { env: { ...process.env, DISPLAY: display }, stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`xdotool ${args.join(" ")} exited ${code}`))));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

export async function stopAll(): Promise<void> {
  await Promise.all(started.splice(0).map(stopChild));
}
