import { ConvexError } from "convex/values";
import type { ClaimedJob, FarmClient, HeartbeatResult, MineEntry, WatchResult } from "../../../extension/worker/farmClient";
import type { Handler, HandlerSource } from "../../../extension/worker/handler";

type Call = { name: string; args: unknown[] };
type Lease = { job: ClaimedJob; cancel: boolean };

/** An in-memory stand-in for the server side of FarmClient, recording every call. */
export class FakeFarm implements FarmClient {
  readonly calls: Call[] = [];
  readonly pending: ClaimedJob[] = [];
  readonly leases = new Map<string, Lease>();
  readonly completed: Array<{ jobId: string; result: unknown }> = [];
  readonly failed: Array<{ jobId: string; error: string; retryable: boolean }> = [];
  readonly released: string[] = [];
  readonly outputs = new Map<string, string[]>();
  /** Throw this from the next call of the given name (once). */
  readonly failNext = new Map<string, unknown>();
  private watchers = new Set<{ caps: string[]; onValue: (v: WatchResult) => void; onError: (e: Error) => void }>();
  private mineWatchers = new Set<(v: MineEntry[]) => void>();
  nextAvailableAt: number | undefined;
  /** Like the server's maxConcurrentJobs for this worker: claims never hold more leases than this. */
  slotLimit = Number.POSITIVE_INFINITY;
  private seq = 0;

  add(type: string, payload: unknown = {}, leaseMs = 30_000): string {
    const jobId = `job${++this.seq}`;
    this.pending.push({ jobId, leaseId: "", type, payload, attempt: 1, leaseMs });
    this.publish();
    return jobId;
  }

  count(name: string): number {
    return this.calls.filter((c) => c.name === name).length;
  }

  leaseOf(jobId: string): string | undefined {
    for (const [leaseId, l] of this.leases) if (l.job.jobId === jobId) return leaseId;
    return undefined;
  }

  requestCancel(jobId: string): void {
    const leaseId = this.leaseOf(jobId);
    if (leaseId) this.leases.get(leaseId)!.cancel = true;
  }

  /** Push the worker's own jobs (with cancel flags) to the mine subscribers. */
  publishMine(): void {
    const entries = [...this.leases.values()].map((l) => ({ jobId: l.job.jobId, cancel: l.cancel }));
    for (const w of this.mineWatchers) w(entries);
  }

  /** Forget a lease as if it expired and went to another worker. */
  expire(jobId: string): void {
    const leaseId = this.leaseOf(jobId);
    if (leaseId) this.leases.delete(leaseId);
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  get mineWatcherCount(): number {
    return this.mineWatchers.size;
  }

  watchError(e: Error): void {
    for (const w of this.watchers) w.onError(e);
  }

  publish(): void {
    const value: WatchResult = { available: this.pending.length > 0 };
    if (!value.available && this.nextAvailableAt !== undefined) value.nextAvailableAt = this.nextAvailableAt;
    for (const w of this.watchers) queueMicrotask(() => w.onValue(value));
  }

  watch(caps: string[], onValue: (v: WatchResult) => void, onError: (e: Error) => void): () => void {
    this.calls.push({ name: "watch", args: [caps] });
    const entry = { caps, onValue, onError };
    this.watchers.add(entry);
    this.publish();
    return () => this.watchers.delete(entry);
  }

  mine(onValue: (v: MineEntry[]) => void): () => void {
    this.calls.push({ name: "mine", args: [] });
    this.mineWatchers.add(onValue);
    return () => this.mineWatchers.delete(onValue);
  }

  async claim(capabilities: string[], max: number): Promise<ClaimedJob[]> {
    this.record("claim", capabilities, max);
    const free = Math.max(0, Math.min(max, this.slotLimit - this.leases.size));
    const jobs = this.pending.splice(0, free).map((j) => ({ ...j, leaseId: `lease-${j.jobId}-${++this.seq}` }));
    for (const job of jobs) this.leases.set(job.leaseId, { job, cancel: false });
    if (jobs.length) this.publish();
    return jobs;
  }

  async heartbeat(leaseId: string, progress?: number, status?: string): Promise<HeartbeatResult> {
    this.record("heartbeat", leaseId, progress, status);
    const lease = this.lease(leaseId);
    return { cancel: lease.cancel, leaseExpiresAt: Date.now() + lease.job.leaseMs };
  }

  async output(leaseId: string, chunk: string): Promise<void> {
    this.record("output", leaseId, chunk);
    const { job } = this.lease(leaseId);
    this.outputs.set(job.jobId, [...(this.outputs.get(job.jobId) ?? []), chunk]);
  }

  async complete(leaseId: string, result: unknown): Promise<void> {
    this.record("complete", leaseId, result);
    const { job } = this.lease(leaseId);
    this.leases.delete(leaseId);
    this.completed.push({ jobId: job.jobId, result });
  }

  async fail(leaseId: string, error: string, retryable: boolean): Promise<void> {
    this.record("fail", leaseId, error, retryable);
    const { job } = this.lease(leaseId);
    this.leases.delete(leaseId);
    this.failed.push({ jobId: job.jobId, error, retryable });
  }

  async release(leaseId: string): Promise<void> {
    this.record("release", leaseId);
    const { job } = this.lease(leaseId);
    this.leases.delete(leaseId);
    this.released.push(job.jobId);
    this.pending.unshift({ ...job, leaseId: "" });
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
