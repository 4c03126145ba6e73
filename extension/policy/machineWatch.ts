import { NetworkManagerMetered } from "./metered";
import { linuxProcessNames, macProcessNames, runningOf } from "./runningPrograms";
import { WindowsWatch } from "./windowsWatch";

/** How this platform lists its programs and says whether the connection is metered. */
export type MachineReaders = {
  /** The running processes' names; undefined when they cannot be read. */
  programs(): Promise<string[] | undefined>;
  /** Whether the connection is metered; undefined when not known. */
  metered(): Promise<boolean | undefined>;
  /** Where "metered" is read from, for the panel; null: this platform is not asked (macOS). */
  meteredSource: string | null;
  dispose(): void;
};

export function defaultMachineReaders(platform = process.platform): MachineReaders {
  if (platform === "linux") {
    const nm = new NetworkManagerMetered();
    return { programs: () => linuxProcessNames(), metered: () => nm.read(), meteredSource: "NetworkManager", dispose: () => nm.dispose() };
  }
  if (platform === "win32") {
    const watch = new WindowsWatch();
    return { programs: () => watch.processNames(), metered: () => watch.metered(), meteredSource: "the Windows connection cost", dispose: () => watch.dispose() };
  }
  if (platform === "darwin") return { programs: () => macProcessNames(), metered: () => Promise.resolve(undefined), meteredSource: null, dispose: () => undefined };
  return { programs: () => Promise.resolve(undefined), metered: () => Promise.resolve(undefined), meteredSource: null, dispose: () => undefined };
}

/** What the watch last saw: the first program of each list that runs, and whether the connection is metered. */
export type MachineSeen = {
  program?: string;
  gpuProgram?: string;
  metered?: boolean;
  /** A list names programs, but this machine's processes cannot be read: the lists do nothing. */
  programsUnreadable?: true;
};

export type WatchedLists = { pause: readonly string[]; pauseGpu: readonly string[] };

/** Programs are looked for every 10 s (farmhand.pauseWhileRunning); the connection's cost every 30 s. */
const PROGRAMS_EVERY_MS = 10_000;
const METERED_EVERY_TICKS = 3;

/**
 * Reads the running programs and the connection's cost on its own timer, only while started (the donor wants to
 * donate), one read at a time, and says what it sees after each start and whenever that changes. Programs are listed
 * only while a list names some.
 */
export class MachineWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private reading = false;
  private ticks = 0;
  private seen: MachineSeen = {};
  /** No reading since the last start: the next is said whatever it is. */
  private fresh = true;

  constructor(
    private readonly readers: MachineReaders,
    private readonly lists: () => WatchedLists,
    private readonly onChange: (seen: MachineSeen) => void,
    private readonly everyMs = PROGRAMS_EVERY_MS,
  ) {}

  get latest(): MachineSeen {
    return this.seen;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.ticks = 0;
    this.fresh = true;
    // a read still on its way from before the stop carries on as this start's first
    if (!this.reading) void this.tick();
  }

  /** Stop reading; what was seen is forgotten (a program may have ended meanwhile). */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.seen = {};
  }

  /** The lists changed: look again now rather than at the next tick. */
  poke(): void {
    if (!this.running || this.reading) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.tick(false);
  }

  dispose(): void {
    this.stop();
    this.readers.dispose();
  }

  private async tick(withMetered = this.ticks % METERED_EVERY_TICKS === 0): Promise<void> {
    this.reading = true;
    this.ticks++;
    const { pause, pauseGpu } = this.lists();
    const names = pause.length || pauseGpu.length ? await this.readers.programs() : [];
    const metered = withMetered ? await this.readers.metered() : this.seen.metered;
    this.reading = false;
    if (!this.running) return;
    const next: MachineSeen = {
      ...(names && runningOf(names, pause) !== undefined ? { program: runningOf(names, pause) } : {}),
      ...(names && runningOf(names, pauseGpu) !== undefined ? { gpuProgram: runningOf(names, pauseGpu) } : {}),
      ...(metered === undefined ? {} : { metered }),
      ...(names === undefined ? { programsUnreadable: true as const } : {}),
    };
    const changed = this.fresh || JSON.stringify(next) !== JSON.stringify(this.seen);
    this.seen = next;
    this.fresh = false;
    if (changed) this.onChange(next);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, this.everyMs);
  }
}
