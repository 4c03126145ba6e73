/**
 * What jobs may download today on a metered connection (farmhand.meteredLimitMB): payloads, checkpoints and app
 * modules, counted as they arrive while the connection is metered; the day is this machine's local day. The tally
 * is kept by `store` (the extension's global state), so a reload does not start the day afresh.
 */
export type MeteredTally = { day: string; bytes: number };

export type TallyStore = { get(): MeteredTally | undefined; set(tally: MeteredTally): void };

export class MeteredAllowance {
  /** Whether the connection is metered now (undefined: not known, which counts as not metered). */
  metered: boolean | undefined;
  limitBytes: number;

  constructor(
    private readonly store: TallyStore,
    limitBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.limitBytes = limitBytes;
  }

  /** Bytes jobs brought down today while the connection was metered. */
  usedToday(): number {
    const tally = this.store.get();
    return tally && tally.day === localDay(this.now()) && Number.isFinite(tally.bytes) ? Math.max(0, tally.bytes) : 0;
  }

  /** Bytes jobs may still bring down today; undefined while the connection is not metered (no limit). */
  left(): number | undefined {
    return this.metered === true ? Math.max(0, this.limitBytes - this.usedToday()) : undefined;
  }

  /** Count bytes a job brought down (only while metered: what came over another connection costs nothing). */
  spend(bytes: number): void {
    if (this.metered !== true || !(bytes > 0)) return;
    this.store.set({ day: localDay(this.now()), bytes: this.usedToday() + Math.round(bytes) });
  }
}

function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}
