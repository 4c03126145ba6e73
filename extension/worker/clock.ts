/** A timer as a Clock hands it out: only that clock can clear it. */
export type TimerId = unknown;

/** Time as the engine's state machines see it; tests pass a manual clock and fire its timers one transition at a time. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout> | undefined),
};
