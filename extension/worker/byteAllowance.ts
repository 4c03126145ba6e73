/**
 * What jobs may still download, in bytes (payloads, checkpoints, app modules: a metered connection's allowance for
 * today), and where the engine counts what came. `left()` undefined: no limit. The engine declares what is left with
 * its slots, so the farm offers only jobs that fit; with nothing left it takes nothing.
 */
export type ByteAllowance = { left(): number | undefined; spend(bytes: number): void };

/** `maxBytes` for a call (ready, claim, and each job's last write): what jobs may still download, when there is a limit. */
export function maxBytes(left: number | undefined): { maxBytes?: number } {
  return left === undefined ? {} : { maxBytes: Math.max(0, Math.floor(left)) };
}

/** Nothing more may be downloaded: the engine takes no work. */
export function allowanceUsed(left: number | undefined): boolean {
  return left !== undefined && left <= 0;
}
