import { freedesktopScreenSaverSource, LogindIdleSource, mutterIdleSource, openSessionBus, openSystemBus } from "./dbusIdleSources";
import { IoregIdleSource, XprintidleSource } from "./commandIdleSources";
import type { IdleReading, IdleSource } from "./idleSource";
import { WindowsIdleSource } from "./windowsIdleSource";
import { X11IdleSource } from "./x11IdleSource";

/** `at`: when it was read (this machine's clock). */
export type MachineIdleReading = IdleReading & { source: string; at: number };

/** The panel's words when no machine-wide source answers. */
export const VSCODE_ONLY_TEXT = "idle is judged by VS Code activity only on this machine";

/** The sources this platform may have, best first. */
export function defaultIdleSources(platform = process.platform, env: NodeJS.ProcessEnv = process.env): IdleSource[] {
  if (platform === "darwin") return [new IoregIdleSource()];
  if (platform === "win32") return [new WindowsIdleSource()];
  if (platform !== "linux" && platform !== "freebsd" && platform !== "openbsd") return [];
  return [
    mutterIdleSource(openSessionBus(env)),
    freedesktopScreenSaverSource(openSessionBus(env)),
    new X11IdleSource(env.DISPLAY, env),
    new XprintidleSource(env.DISPLAY),
    new LogindIdleSource(openSystemBus(env)),
  ];
}

/**
 * Machine-wide idle time from the first source that answers. A source that fails is dropped for the session (and
 * disposed) without noise, and the next one is tried; with none left, `read` answers undefined and the caller
 * judges idle by VS Code activity alone.
 */
export class MachineIdle {
  private sources: IdleSource[];
  private answered: IdleSource | undefined;

  constructor(
    sources: IdleSource[],
    /** The source that answers changed (undefined: none is left); a dropped source itself makes no noise. */
    private readonly onSourceChange: (source: string | undefined) => void = () => undefined,
  ) {
    this.sources = [...sources];
  }

  /** The source in use, once one answered (or the first still to be tried). */
  get source(): IdleSource | undefined {
    return this.sources[0];
  }

  /** How often to read while a return must be noticed quickly. */
  get fastPollMs(): number {
    return this.sources[0]?.fastPollMs ?? 1_000;
  }

  get exhausted(): boolean {
    return this.sources.length === 0;
  }

  async read(): Promise<MachineIdleReading | undefined> {
    while (this.sources.length) {
      const source = this.sources[0];
      try {
        const reading = await source.read();
        if (this.answered !== source) {
          this.answered = source;
          this.onSourceChange(source.name);
        }
        return { ...reading, source: source.name, at: Date.now() };
      } catch {
        if (this.sources[0] !== source) continue; // disposed or dropped meanwhile
        this.sources.shift();
        source.dispose();
      }
    }
    if (this.answered) {
      this.answered = undefined;
      this.onSourceChange(undefined);
    }
    return undefined;
  }

  dispose(): void {
    this.sources.splice(0).forEach((s) => s.dispose());
  }
}
