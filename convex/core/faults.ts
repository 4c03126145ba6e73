/**
 * Test-only fault injection: a test arms a named point to throw the next `times` times it is reached, to show
 * that a loop recovers from one failed run. Nothing in the project arms a point, so in production
 * `maybeFault` looks up an absent global and returns. The arms live on `globalThis`, not in this module, so
 * a test and the functions it runs share them however the module was loaded.
 */
export type FaultPoint = "dispatch" | "summary" | "bulk" | "webhook" | "settle";

const KEY = "__farmhandFaults";

function arms(): Map<FaultPoint, number> | undefined {
  return (globalThis as Record<string, unknown>)[KEY] as Map<FaultPoint, number> | undefined;
}

export function armFault(point: FaultPoint, times = 1): void {
  const holder = globalThis as Record<string, unknown>;
  const map = arms() ?? new Map<FaultPoint, number>();
  map.set(point, times);
  holder[KEY] = map;
}

export function disarmFaults(): void {
  delete (globalThis as Record<string, unknown>)[KEY];
}

/** Throw here if a test armed this point. */
export function maybeFault(point: FaultPoint): void {
  const map = arms();
  const left = map?.get(point) ?? 0;
  if (left <= 0) return;
  map!.set(point, left - 1);
  throw new Error(`injected fault at ${point} (test only)`);
}
