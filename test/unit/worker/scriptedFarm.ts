import { ConvexError } from "convex/values";
import type { CallArgs, CallResult, ClaimedJob, DoorbellValue, FarmClient } from "../../../extension/worker/farmClient";
import type { Handler, HandlerSource } from "../../../extension/worker/handler";

type Call = { name: string; args: unknown[] };
type Lease = { job: ClaimedJob; cancel: boolean };
type JobId = ClaimedJob["jobId"];
type Doorbell = { onValue: (v: DoorbellValue) => void; onError: (e: Error) => void };

/**
 * A scripted stand-in for the server side of FarmClient, recording every call. It keeps none of the server's
 * rules: no dispatcher, no waiting lines, no slot counting. A claim answers with the next jobs the test queued
 * (up to `max`, or what `claimAnswer` says); the doorbell shows what the test offered; each lease it handed out
 * answers until the test expires it. Tests about the server's offer and claim rules run against the loopback
 * test server (test/engine/engineRules.test.ts); this one serves tests of the engine's own transitions and of
 * faults the server cannot produce. Typed from the same call table as the real client.
 */
export class ScriptedFarm implements FarmClient {
  readonly calls: Call[] = [];
  /** Jobs the next claims answer with, in order (the lane heads, as far as the test says). */
  readonly queued: ClaimedJob[] = [];
  /** Those of the queued jobs the doorbell shows as offered to this worker. */
  private readonly offers = new Set<string>();
  readonly leases = new Map<string, Lease>();
  readonly completed: Array<{ jobId: string; result: unknown; cpuMs?: number; energyJ?: number }> = [];
  readonly failed: Array<{ jobId: string; error: string; retryable: boolean; cpuMs?: number; energyJ?: number }> = [];
  readonly released: string[] = [];
  /** What each claim, ready and last write said the engine's jobs may still download (`maxBytes`), in order. */
  readonly maxBytesSent: Array<{ call: string; maxBytes?: number; slots?: number }> = [];
  readonly outputs = new Map<string, string[]>();
  /** Throw this from the next call of the given name (once). */
  readonly failNext = new Map<string, Error>();
  /** How many of the queued jobs a claim answers with (default: as many as it asks for). */
  claimAnswer?: (args: CallArgs<"claim">) => number;
  /** Set by a test that plays connection drops. */
  onConnectionChange?: (cb: (connected: boolean) => void) => () => void;
  private readonly doorbells = new Set<Doorbell>();
  private seq = 0;

  /** A job the next claims answer with; the doorbell does not show it (a full claim finds it). */
  queue(type: string, payload: unknown = {}, leaseMs = 30_000, extra: Partial<ClaimedJob> = {}): JobId {
    const jobId = (extra.jobId ?? `job${++this.seq}`) as JobId;
    this.queued.push({ jobId, leaseId: "", type, payload, attempt: 1, leaseMs, leaseExpiresAt: 0, ...extra });
    return jobId;
  }

  /** A job offered to this worker: queued, and the doorbell rings showing it. */
  offer(type: string, payload: unknown = {}, leaseMs = 30_000, extra: Partial<ClaimedJob> = {}): JobId {
    const jobId = this.queue(type, payload, leaseMs, extra);
    this.offers.add(jobId);
    this.ring();
    return jobId;
  }

  /** Jobs offered to this worker without the doorbell having rung yet. */
  offerQuietly(...types: string[]): JobId[] {
    return types.map((type) => {
      const jobId = this.queue(type);
      this.offers.add(jobId);
      return jobId;
    });
  }

  /** The offers the doorbell shows now. */
  get offered(): string[] {
    return [...this.offers];
  }

  count(name: string): number {
    return this.calls.filter((c) => c.name === name).length;
  }

  names(): string[] {
    return this.calls.map((c) => c.name);
  }

  /** The arguments of every call of this name, in order. */
  sent(name: string): unknown[][] {
    return this.calls.filter((c) => c.name === name).map((c) => c.args);
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

  /** Forget a lease as if it expired and went to another worker: its calls answer stale_lease from now on. */
  expire(jobId: string): void {
    const leaseId = this.leaseOf(jobId);
    if (leaseId) this.leases.delete(leaseId);
  }

  get doorbellCount(): number {
    return this.doorbells.size;
  }

  doorbellError(e: Error): void {
    for (const d of this.doorbells) d.onError(e);
  }

  /** The current doorbell value: the offers the test made, the cancels it requested (a resync the test rings itself). */
  value(): DoorbellValue {
    return {
      offers: this.offered.map((jobId) => ({ jobId: jobId as JobId, expiresAt: Date.now() + 5_000 })),
      cancel: [...this.leases.values()].filter((l) => l.cancel).map((l) => l.job.jobId),
      resync: false,
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

  private noteMaxBytes(call: string, args: { maxBytes?: number; slots?: number }): void {
    this.maxBytesSent.push({ call, ...("maxBytes" in args && args.maxBytes !== undefined ? { maxBytes: args.maxBytes } : {}), ...(args.slots === undefined ? {} : { slots: args.slots }) });
  }

  claim(args: CallArgs<"claim">): Promise<ClaimedJob[]> {
    return answer(() => {
      this.record("claim", args.capabilities, args.max);
      this.noteMaxBytes("claim", args);
      const n = Math.max(0, this.claimAnswer ? this.claimAnswer(args) : (args.max ?? 1));
      const taken = this.queued.splice(0, n);
      const jobs = taken.map((j) => ({ ...j, leaseId: `lease-${j.jobId}-${++this.seq}`, leaseExpiresAt: Date.now() + j.leaseMs }));
      for (const job of jobs) {
        this.offers.delete(job.jobId);
        this.leases.set(job.leaseId, { job, cancel: false });
      }
      if (taken.length > 0) this.ring();
      return jobs;
    });
  }

  ready({ capabilities, slots, stopping, maxBytes }: CallArgs<"ready">): Promise<CallResult<"ready">> {
    return answer(() => {
      this.noteMaxBytes("ready", { slots, maxBytes });
      if (stopping) this.record("ready", capabilities, slots, stopping);
      else this.record("ready", capabilities, slots);
      return { waitingFor: 0 };
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

  complete({ leaseId, result, slots, cpuMs, maxBytes, energyJ }: CallArgs<"complete">): Promise<CallResult<"complete">> {
    return answer(() => {
      this.noteMaxBytes("complete", { slots, maxBytes });
      this.record("complete", leaseId, result, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.completed.push({ jobId: job.jobId, result, ...(cpuMs === undefined ? {} : { cpuMs }), ...(energyJ === undefined ? {} : { energyJ }) });
      this.ring();
      return { status: "succeeded" as const };
    });
  }

  fail({ leaseId, error, retryable, slots, cpuMs, energyJ }: CallArgs<"fail">): Promise<CallResult<"fail">> {
    return answer(() => {
      this.record("fail", leaseId, error, retryable, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.failed.push({ jobId: job.jobId, error, retryable: retryable ?? false, ...(cpuMs === undefined ? {} : { cpuMs }), ...(energyJ === undefined ? {} : { energyJ }) });
      this.ring();
      return { status: retryable ? ("pending" as const) : ("dead" as const), availableAt: undefined };
    });
  }

  release({ leaseId, slots }: CallArgs<"release">): Promise<CallResult<"release">> {
    return answer(() => {
      this.record("release", leaseId, slots);
      const { job } = this.lease(leaseId);
      this.leases.delete(leaseId);
      this.released.push(job.jobId);
      this.ring();
      return { status: "pending" as const };
    });
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
