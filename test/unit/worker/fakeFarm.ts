import { ConvexError } from "convex/values";
import type { CallArgs, CallResult, ClaimedJob, DoorbellValue, FarmClient, Slots } from "../../../extension/worker/farmClient";
import type { Handler, HandlerSource } from "../../../extension/worker/handler";

type Call = { name: string; args: unknown[] };
type Lease = { job: ClaimedJob; cancel: boolean };
type JobId = ClaimedJob["jobId"];
type Doorbell = { onValue: (v: DoorbellValue) => void; onError: (e: Error) => void };

/**
 * An in-memory stand-in for the server side of FarmClient, recording every call. It keeps the server's
 * rules the engine relies on: a claim takes this worker's offers first, then ready jobs ("heads"), and
 * records what it still wants; a declaration (`slots` on complete/fail/release, or ready) sets what it
 * wants to slots − running − offers held; the dispatcher offers pending jobs to a waiting worker at once
 * and rings its doorbell. It implements the server's own types (derived from convex/), so a server change
 * the engine does not follow breaks the build here too.
 */
export class FakeFarm implements FarmClient {
  readonly calls: Call[] = [];
  readonly pending: ClaimedJob[] = [];
  readonly offered: ClaimedJob[] = [];
  readonly leases = new Map<string, Lease>();
  readonly completed: Array<{ jobId: string; result: unknown; cpuMs?: number }> = [];
  readonly failed: Array<{ jobId: string; error: string; retryable: boolean; cpuMs?: number }> = [];
  readonly released: string[] = [];
  readonly outputs = new Map<string, string[]>();
  /** Throw this from the next call of the given name (once). */
  readonly failNext = new Map<string, Error>();
  /** How many more jobs the server would offer this worker now. */
  wants = 0;
  resync = false;
  /** Claims that read the ready queue (what collides under load on a real deployment). */
  headClaims = 0;
  /** Like the server's maxConcurrentJobs for this worker: claims never hold more leases than this. */
  slotLimit = Number.POSITIVE_INFINITY;
  /** Set by a test that plays connection drops. */
  onConnectionChange?: (cb: (connected: boolean) => void) => () => void;
  private readonly doorbells = new Set<Doorbell>();
  private seq = 0;

  add(type: string, payload: unknown = {}, leaseMs = 30_000): string {
    const jobId = `job${++this.seq}` as JobId;
    this.pending.push({ jobId, leaseId: "", type, payload, attempt: 1, leaseMs, leaseExpiresAt: 0 });
    this.dispatch();
    return jobId;
  }

  count(name: string): number {
    return this.calls.filter((c) => c.name === name).length;
  }

  names(): string[] {
    return this.calls.map((c) => c.name);
  }

  leaseOf(jobId: string): string | undefined {
    for (const [leaseId, l] of this.leases) if (l.job.jobId === jobId) return leaseId;
    return undefined;
  }

  /** Cancel a running job: flagged for heartbeats, and a notice through the doorbell (as the server does). */
  requestCancel(jobId: string, options: { ring?: boolean } = { ring: true }): void {
    const leaseId = this.leaseOf(jobId);
    if (leaseId) this.leases.get(leaseId)!.cancel = true;
    if (options.ring !== false) this.ring();
  }

  /** Forget a lease as if it expired and went to another worker. */
  expire(jobId: string): void {
    const leaseId = this.leaseOf(jobId);
    if (leaseId) this.leases.delete(leaseId);
  }

  /** Jobs the dispatcher offered to this worker without the doorbell having rung yet. */
  offerQuietly(...types: string[]): JobId[] {
    return types.map((type) => {
      const jobId = `job${++this.seq}` as JobId;
      this.offered.push({ jobId, leaseId: "", type, payload: {}, attempt: 1, leaseMs: 30_000, leaseExpiresAt: 0 });
      return jobId;
    });
  }

  /** An offer was not claimed in time: it goes back, this worker stops waiting and is asked to resync. */
  expireOffers(): void {
    this.pending.unshift(...this.offered.splice(0));
    this.wants = 0;
    this.resync = true;
    this.ring();
  }

  get doorbellCount(): number {
    return this.doorbells.size;
  }

  doorbellError(e: Error): void {
    for (const d of this.doorbells) d.onError(e);
  }

  /** The current doorbell value, as workers:doorbell answers it. */
  value(): DoorbellValue {
    return {
      offers: this.offered.map((j) => ({ jobId: j.jobId, expiresAt: Date.now() + 5_000 })),
      cancel: [...this.leases.values()].filter((l) => l.cancel).map((l) => l.job.jobId),
      resync: this.resync,
    };
  }

  ring(value: DoorbellValue = this.value()): void {
    for (const d of this.doorbells) queueMicrotask(() => d.onValue(value));
  }

  doorbell(onValue: (v: DoorbellValue) => void, onError: (e: Error) => void): () => void {
    this.calls.push({ name: "doorbell", args: [] });
    const entry = { onValue, onError };
    this.doorbells.add(entry);
    queueMicrotask(() => onValue(this.value()));
    return () => this.doorbells.delete(entry);
  }

  claim({ capabilities, max }: CallArgs<"claim">): Promise<ClaimedJob[]> {
    return answer(() => {
      this.record("claim", capabilities, max);
      const serverFree = this.slotLimit - this.leases.size;
      const wanted = Math.max(0, Math.min(max ?? 1, serverFree));
      const taken = this.offered.splice(0, wanted);
      const fromHeads = Math.min(wanted, serverFree - this.offered.length) - taken.length;
      if (fromHeads > 0) {
        this.headClaims++;
        const heads = this.pending.splice(0, fromHeads);
        taken.push(...heads);
        this.wants = fromHeads - heads.length;
        this.resync = false;
      }
      const jobs = taken.map((j) => ({ ...j, leaseId: `lease-${j.jobId}-${++this.seq}`, leaseExpiresAt: Date.now() + j.leaseMs }));
      for (const job of jobs) this.leases.set(job.leaseId, { job, cancel: false });
      this.ring();
      return jobs;
    });
  }

  ready({ capabilities, slots, stopping }: CallArgs<"ready">): Promise<CallResult<"ready">> {
    return answer(() => {
      if (stopping) this.record("ready", capabilities, slots, stopping);
      else this.record("ready", capabilities, slots);
      this.declare(slots ?? 0);
      this.resync = false;
      this.ring();
      return { waitingFor: this.wants };
    });
  }

  presence(): Promise<CallResult<"presence">> {
    return answer(() => {
      this.record("presence");
      return { lastSeenAt: Date.now() };
    });
  }

  heartbeat({ leaseId, progress, status, suspended }: CallArgs<"heartbeat">): Promise<CallResult<"heartbeat">> {
    return answer(() => {
      this.record("heartbeat", leaseId, progress, status, ...(suspended === undefined ? [] : [suspended]));
      const lease = this.lease(leaseId);
      return { cancel: lease.cancel, leaseExpiresAt: Date.now() + lease.job.leaseMs };
    });
  }

  reportFacts({ facts }: CallArgs<"reportFacts">): Promise<CallResult<"reportFacts">> {
    return answer(() => {
      this.record("reportFacts", facts);
      return { changed: true };
    });
  }

  output({ leaseId, chunk }: CallArgs<"output">): Promise<CallResult<"output">> {
    return answer(() => {
      this.record("output", leaseId, chunk);
      const { job } = this.lease(leaseId);
      this.outputs.set(job.jobId, [...(this.outputs.get(job.jobId) ?? []), chunk]);
      return { seq: this.outputs.get(job.jobId)!.length };
    });
  }

  checkpoint({ leaseId, data }: CallArgs<"checkpoint">): Promise<CallResult<"checkpoint">> {
    return answer(() => {
      this.record("checkpoint", leaseId, data);
      this.lease(leaseId);
      return { bytes: data.length };
    });
  }

  /** Jobs here have no parents: every lease's inputs are one empty page. */
  inputs({ leaseId }: CallArgs<"inputs">): Promise<CallResult<"inputs">> {
    return answer(() => {
      this.lease(leaseId);
      return { page: [], cursor: null, done: true };
    });
  }

  complete({ leaseId, result, slots, cpuMs }: CallArgs<"complete">): Promise<CallResult<"complete">> {
    return answer(() => {
      this.record("complete", leaseId, result, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.completed.push({ jobId: job.jobId, result, ...(cpuMs === undefined ? {} : { cpuMs }) });
      this.ended(slots);
      return { status: "succeeded" as const };
    });
  }

  fail({ leaseId, error, retryable, slots, cpuMs }: CallArgs<"fail">): Promise<CallResult<"fail">> {
    return answer(() => {
      this.record("fail", leaseId, error, retryable, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.failed.push({ jobId: job.jobId, error, retryable: retryable ?? false, ...(cpuMs === undefined ? {} : { cpuMs }) });
      this.ended(slots);
      return { status: retryable ? ("pending" as const) : ("dead" as const), availableAt: undefined };
    });
  }

  release({ leaseId, slots }: CallArgs<"release">): Promise<CallResult<"release">> {
    return answer(() => {
      this.record("release", leaseId, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.released.push(job.jobId);
      this.pending.unshift({ ...job, leaseId: "" });
      this.ended(slots);
      return { status: "pending" as const };
    });
  }

  private ended(slots: Slots | undefined): void {
    if (slots !== undefined) this.declare(slots);
    this.ring();
  }

  /** The server's declareSlots: keep the offers that fit, hand back the rest, want what is left. */
  private declare(slots: Slots): void {
    const capacity = Math.max(0, Math.min(slots, this.slotLimit) - this.leases.size);
    this.pending.unshift(...this.offered.splice(capacity));
    this.wants = capacity - this.offered.length;
    this.dispatch();
  }

  /** The dispatcher: offer pending jobs while this worker wants some. */
  private dispatch(): void {
    let moved = false;
    while (this.wants > 0 && this.pending.length > 0) {
      this.offered.push(this.pending.shift()!);
      this.wants--;
      moved = true;
    }
    if (moved) this.ring();
  }

  private record(name: string, ...args: unknown[]): void {
    this.calls.push({ name, args });
    const e = this.failNext.get(name);
    if (e !== undefined) {
      this.failNext.delete(name);
      throw e;
    }
  }

  private lease(leaseId: string): Lease {
    const lease = this.leases.get(leaseId);
    if (!lease) throw new ConvexError({ code: "stale_lease", message: "This lease is no longer yours" });
    return lease;
  }
}

/** Runs a call's body as the server answers: its result or its error arrives as the promise, never as a throw. */
function answer<T>(body: () => T): Promise<T> {
  return new Promise((resolve) => resolve(body()));
}

export function keyError(code: "bad_key" | "revoked"): ConvexError<{ code: string; message: string }> {
  return new ConvexError({ code, message: code === "revoked" ? "Worker key revoked" : "Unknown worker key" });
}

/** A handler source over plain in-process handlers (the engine tests do not need child processes). */
export function handlersOf(...handlers: Handler[]): HandlerSource {
  const byType = new Map(handlers.map((h) => [h.type, h]));
  return {
    get: (type) => byType.get(type),
    capabilities: async () => {
      const caps: string[] = [];
      for (const h of handlers) caps.push(...((await h.capabilities?.()) ?? [h.type]));
      return caps;
    },
  };
}

export function handler(type: string, run: Handler["run"], extra: Partial<Handler> = {}): Handler {
  return { type, run, ...extra };
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
