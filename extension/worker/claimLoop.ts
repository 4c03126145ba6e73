import type { Backoff } from "./backoff";
import { maxBytes } from "./byteAllowance";
import type { Clock, TimerId } from "./clock";
import type { ClaimedJob, FarmCalls } from "./farmClient";

/**
 * `fullDue`: the next claim reads the lane heads for every free slot (at start, after resume, reconnect or a
 * resync) instead of taking exactly the doorbell's offers.
 */
export type ClaimState =
  | { kind: "idle"; fullDue: boolean }
  | { kind: "claiming"; fullDue: boolean; done: Promise<void> }
  | { kind: "backingOff"; fullDue: boolean; timer: TimerId };

export type ClaimPorts = {
  client: Pick<FarmCalls, "claim">;
  clock: Clock;
  backoff: Backoff;
  capabilities(): string[];
  /** Free slots to claim into, or undefined while the engine takes no work (paused, holding for memory, stopping). */
  freeSlots(): number | undefined;
  /** What jobs may still download (bytes), said with the claim; undefined: no limit. */
  bytesLeft(): number | undefined;
  /** Say how many jobs the engine runs at once (a full claim with no room to claim into is answered so). */
  declare(): void;
  /** Start a claimed job; `claimedAt`: when the claim that handed it out was sent. */
  start(job: ClaimedJob, claimedAt: number): void;
  /** A claim failed; true when that stopped the engine. */
  failed(e: unknown): boolean;
};

/**
 * Doorbell → offers → claim. It claims what the doorbell offers (exactly that many, so the server reads only this
 * worker's own rows), or, when a full claim is due, up to the free slots: that one reads the lane heads and, if it
 * finds fewer jobs than slots, records this worker as waiting.
 */
export class ClaimLoop {
  private state: ClaimState = { kind: "idle", fullDue: false };
  /** Offers the doorbell shows that this engine has not claimed yet. */
  private offers = new Set<string>();
  /** Counts doorbell values, so a claim's answer can tell whether a newer value arrived meanwhile. */
  private bellValues = 0;

  constructor(private readonly ports: ClaimPorts) {}

  get current(): Readonly<ClaimState> {
    return this.state;
  }

  get offered(): string[] {
    return [...this.offers];
  }

  /** A doorbell value: these offers wait for this engine (none it runs already). */
  rang(offers: string[], resync: boolean): void {
    this.bellValues++;
    this.offers = new Set(offers);
    if (resync) this.wantFull();
    else this.next();
  }

  wantFull(): void {
    this.state = { ...this.state, fullDue: true };
    this.next();
  }

  /** Claim if there is reason and room to. */
  next(): void {
    if (this.state.kind !== "idle") return;
    const free = this.ports.freeSlots();
    if (free === undefined) return;
    const full = this.state.fullDue;
    if (free <= 0) {
      // Offers wait for the job that is ending (the server only offers what this engine declared room for).
      // A resync is answered with a declaration: there is no room to claim into.
      if (full) {
        this.state = { kind: "idle", fullDue: false };
        this.ports.declare();
      }
      return;
    }
    const max = full ? free : Math.min(free, this.offers.size);
    if (max <= 0) return;
    const asked = [...this.offers];
    const bellBefore = this.bellValues;
    const sentAt = this.ports.clock.now();
    const done = this.ports.client.claim({ capabilities: this.ports.capabilities(), max, ...maxBytes(this.ports.bytesLeft()) }).then(
      (jobs) => this.claimed(jobs, asked, bellBefore, sentAt),
      (e: unknown) => this.claimFailed(e, full),
    );
    this.state = { kind: "claiming", fullDue: false, done };
  }

  /** Stop retrying (paused or stopping); a full claim still due stays due. */
  holdRetry(): void {
    if (this.state.kind !== "backingOff") return;
    this.ports.clock.clearTimeout(this.state.timer);
    this.state = { kind: "idle", fullDue: this.state.fullDue };
  }

  /** Resolves once no claim is on its way (it may still hand over jobs). */
  async settled(): Promise<void> {
    while (this.state.kind === "claiming") await this.state.done;
  }

  /** Forget everything: the engine stopped. */
  reset(): void {
    this.holdRetry();
    this.offers.clear();
    this.state = { kind: "idle", fullDue: false };
  }

  private claimed(jobs: ClaimedJob[], asked: string[], bellBefore: number, sentAt: number): void {
    this.state = { kind: "idle", fullDue: this.state.fullDue };
    this.ports.backoff.reset();
    // The claim takes the best offers, which may not be the ones this engine saw: only a doorbell value newer
    // than the claim says which are left. Without one, what it asked for is taken or gone.
    if (this.bellValues === bellBefore) for (const id of asked) this.offers.delete(id);
    for (const job of jobs) {
      this.offers.delete(job.jobId);
      this.ports.start(job, sentAt);
    }
    this.next();
  }

  private claimFailed(e: unknown, full: boolean): void {
    const fullDue = this.state.fullDue || full;
    this.state = { kind: "idle", fullDue };
    if (this.ports.failed(e) || this.ports.freeSlots() === undefined) return;
    const timer = this.ports.clock.setTimeout(() => {
      this.state = { kind: "idle", fullDue: this.state.fullDue };
      this.next();
    }, this.ports.backoff.next());
    this.state = { kind: "backingOff", fullDue, timer };
  }
}
