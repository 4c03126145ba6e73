/** One way of reading how long the whole machine has had no keyboard or mouse input. */
export type IdleReading = {
  /** Milliseconds since the last input event anywhere on the machine (this user's session). */
  idleMs: number;
  /** The screen is locked (undefined: this source cannot tell). A locked screen counts as away. */
  locked?: boolean;
  /**
   * A fullscreen application or a presentation holds the screen (a video, a game, a call shared fullscreen): the owner
   * is there without touching anything, so it counts as present. Undefined: this source cannot tell.
   */
  fullscreen?: boolean;
};

export type IdleSource = {
  /** Shown in the log and the tooltip: which source judges idle on this machine. */
  readonly name: string;
  /** How often to read while jobs run and a return must be noticed within a second (what one read costs decides). */
  readonly fastPollMs: number;
  /** Rejects when the source cannot answer; the chain then drops it for the session. */
  read(): Promise<IdleReading>;
  dispose(): void;
};

export class IdleSourceError extends Error {}
