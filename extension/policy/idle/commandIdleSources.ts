import { execFile } from "node:child_process";
import { readOsIdleMs } from "../probes";
import { IdleSourceError, type IdleReading, type IdleSource } from "./idleSource";

/** Runs a command, resolves with its output; rejects when it cannot be run, fails or times out. */
export type RunCommand = (command: string, args: string[], env?: NodeJS.ProcessEnv) => Promise<string>;

const runCommand: RunCommand = (command, args, env) =>
  new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 2_000, windowsHide: true, env }, (error, stdout) => (error ? reject(new Error(`${command}: ${error.message}`)) : resolve(stdout)));
  });

/**
 * X11 without a desktop idle service: the XScreenSaver extension's idle time through Debian's `xprintidle` (no
 * native binding to build). One short process per read, so it is read once a second while jobs run (bench:
 * probe CPU while idle); it cannot see a lock.
 */
export class XprintidleSource implements IdleSource {
  readonly name = "X11 XScreenSaver (xprintidle)";
  readonly fastPollMs = 1_000;

  constructor(
    private readonly display: string | undefined,
    private readonly run: RunCommand = runCommand,
  ) {}

  async read(): Promise<IdleReading> {
    if (!this.display) throw new IdleSourceError("xprintidle: no X display");
    return { idleMs: parseXprintidle(await this.run("xprintidle", [], { ...process.env, DISPLAY: this.display })) };
  }

  dispose(): void {}
}

/** `xprintidle` prints the idle time in milliseconds and a newline. */
export function parseXprintidle(out: string): number {
  const text = out.trim();
  if (!/^\d+$/.test(text)) throw new IdleSourceError(`xprintidle printed ${JSON.stringify(text.slice(0, 80))}, not milliseconds`);
  return Number(text);
}

/** macOS as before: IOHIDSystem's HIDIdleTime through `ioreg` (one process per read); it cannot see a lock. */
export class IoregIdleSource implements IdleSource {
  readonly name = "macOS IOHIDSystem (ioreg)";
  readonly fastPollMs = 1_000;

  constructor(private readonly readIdleMs: () => Promise<number | undefined> = () => readOsIdleMs("darwin")) {}

  async read(): Promise<IdleReading> {
    const idleMs = await this.readIdleMs();
    if (idleMs === undefined) throw new IdleSourceError("ioreg printed no HIDIdleTime");
    return { idleMs };
  }

  dispose(): void {}
}
