import { LIMITS } from "../../convex/lib/limits";
import { Backoff } from "./backoff";
import { errorCode, errorMessage, isKeyError } from "./errors";
import { TypedEmitter } from "./events";
import type { ClaimedJob, FarmClient, MineEntry, WatchResult } from "./farmClient";
import type { HandlerSource } from "./handler";
import { JobRun, type JobOutcome, type JobRunOptions } from "./jobRun";

export type WorkerState = "stopped" | "running" | "paused" | "draining" | "stopping";

export type WorkerEvents = {
  state: { state: WorkerState; previous: WorkerState; reason?: string };
  jobStarted: { jobId: string; type: string; attempt: number };
  jobProgress: { jobId: string; progress?: number; status?: string };
  jobOutput: { jobId: string; text: string };
  jobFinished: { jobId: string; type: string; outcome: JobOutcome["kind"]; error?: string; durationMs: number };
  error: { message: string; code?: string };
  connection: { connected: boolean };
  capabilities: { capabilities: string[] };
};

export type WorkerOptions = Partial<JobRunOptions> & {
  client: FarmClient;
  handlers: HandlerSource;
  concurrency?: number;
  /** Advertise only these of the handlers' capabilities (each must be provided by a handler). */
  onlyCapabilities?: string[];
  /** Auto-pause after this many handler failures in a row. */
  maxConsecutiveFailures?: number;
  /** Base delay of the jittered backoff after a failed claim. */
  claimBackoffMs?: number;
};

export type RunningJobView = {
  jobId: string;
  type: string;
  attempt: number;
  startedAt: number;
  progress?: number;
  status?: string;
};

export type WorkerSnapshot = {
  state: WorkerState;
  reason?: string;
  connected: boolean;
  concurrency: number;
  capabilities: string[];
  running: RunningJobView[];
  totals: { succeeded: number; failed: number; canceled: number; released: number; lost: number };
};

const PERMANENT_CODES = new Set(["invalid_argument", "forbidden"]);

export const MAX_CONCURRENCY = LIMITS.maxConcurrentJobs;

/**
 * The work-stealing loop. Idle, it holds one subscription (workers:watch) and nothing else: no calls, no
 * timers, except one wake-up timer when the server says work becomes available at a known time.
 */
export class Worker extends TypedEmitter<WorkerEvents> {
  private _state: WorkerState = "stopped";
  private reason: string | undefined;
  private _concurrency: number;
  private capabilities: string[] = [];
  private connected = false;
  private readonly runs = new Map<string, { run: JobRun; done: Promise<void> }>();
  private readonly totals = { succeeded: 0, failed: 0, canceled: 0, released: 0, lost: 0 };
  private consecutiveFailures = 0;

  private available = false;
  /** What workers:watch said last. A claim that finds nothing (say, the server's slot limit for this worker is
   * reached) clears `available`, but the watch answer may not change; a freed slot must try again. */
  private watchAvailable = false;
  private claimInFlight: Promise<void> | undefined;
  private readonly givingBack = new Set<Promise<unknown>>();
  private claiming = false;
  private claimWanted = false;
  private claimRetryTimer: ReturnType<typeof setTimeout> | undefined;
  private wakeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly claimBackoff: Backoff;
  private unwatch: (() => void) | undefined;
  private unmine: (() => void) | undefined;
  private unconnection: (() => void) | undefined;
  private stopped: Promise<void> | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly runOptions: JobRunOptions;

  constructor(private readonly options: WorkerOptions) {
    super();
    this._concurrency = checkConcurrency(options.concurrency ?? 1);
    this.claimBackoff = new Backoff(options.claimBackoffMs ?? 500, 30_000);
    this.runOptions = {
      jobTimeoutMs: options.jobTimeoutMs ?? 30 * 60_000,
      graceMs: options.graceMs ?? 5_000,
      maxResultBytes: options.maxResultBytes ?? LIMITS.resultBytes,
      maxChunkChars: options.maxChunkChars ?? LIMITS.outputChunkChars,
      outputFlushMs: options.outputFlushMs ?? 200,
    };
  }

  get state(): WorkerState {
    return this._state;
  }

  get concurrency(): number {
    return this._concurrency;
  }

  snapshot(): WorkerSnapshot {
    return {
      state: this._state,
      reason: this.reason,
      connected: this.connected,
      concurrency: this._concurrency,
      capabilities: [...this.capabilities],
      running: [...this.runs.values()].map(({ run }) => ({
        jobId: run.job.jobId,
        type: run.job.type,
        attempt: run.job.attempt,
        startedAt: run.startedAt,
        progress: run.progress,
        status: run.status,
      })),
      totals: { ...this.totals },
    };
  }

  /** Start taking work. Resolves once subscribed (capabilities are probed first). */
  async start(): Promise<void> {
    if (this._state !== "stopped") return;
    this.setState("running", "started");
    this.stopped = undefined;
    this.consecutiveFailures = 0;
    try {
      this.capabilities = await this.advertisedCapabilities();
    } catch (e) {
      await this.stop(`could not start: ${errorMessage(e)}`);
      throw e;
    }
    // Paused while the handlers were probed: still subscribe, so resume() finds work; stopped: nothing to do.
    const state = this._state as WorkerState;
    if (state === "stopped" || state === "stopping") return;
    if (this.capabilities.length === 0) {
      await this.stop("no handlers with capabilities are registered");
      return;
    }
    const client = this.options.client;
    this.unconnection = client.onConnectionChange?.((connected) => {
      this.connected = connected;
      this.emit("connection", { connected });
    });
    if (!client.onConnectionChange) this.connected = true;
    this.unwatch = client.watch(
      this.capabilities,
      (v) => this.onWatch(v),
      (e) => this.onServerError(e, "watch"),
    );
  }

  /** Take no new work; running jobs go on. */
  pause(reason = "paused"): void {
    if (this._state !== "running") return;
    this.clearClaimTimers();
    this.setState("paused", reason);
  }

  resume(): void {
    if (this._state !== "paused") return;
    this.consecutiveFailures = 0;
    this.setState("running", "resumed");
    this.available ||= this.watchAvailable;
    this.maybeClaim();
  }

  /** Finish the running jobs, take no new ones, then stop. */
  drain(): Promise<void> {
    if (this._state === "running" || this._state === "paused") {
      this.clearClaimTimers();
      this.setState("draining", "draining");
      if (this.runs.size === 0) return this.stop("drained");
    }
    if (this._state === "stopped") return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Abort running jobs, give their leases back, unsubscribe. */
  stop(reason = "stopped"): Promise<void> {
    if (this._state === "stopped") return Promise.resolve();
    if (this.stopped) return this.stopped;
    this.stopped = this.shutdown(reason);
    return this.stopped;
  }

  /**
   * Re-read the handlers' capabilities (a handler was added or removed, Ollama's models changed) and, when they
   * changed, resubscribe with the new set. Running jobs are not touched.
   */
  async refreshCapabilities(): Promise<string[]> {
    if (this._state === "stopped" || this._state === "stopping") return this.capabilities;
    const next = await this.advertisedCapabilities();
    const state = this._state as WorkerState; // may have changed while the handlers were probed
    if (next.join() === this.capabilities.join() || state === "stopped" || state === "stopping") return this.capabilities;
    this.capabilities = next;
    this.emit("capabilities", { capabilities: [...next] });
    this.unwatch?.();
    this.unwatch = undefined;
    this.available = false;
    if (next.length === 0) {
      this.pause("no handler capabilities to offer");
      return next;
    }
    this.unwatch = this.options.client.watch(
      next,
      (v) => this.onWatch(v),
      (e) => this.onServerError(e, "watch"),
    );
    return next;
  }

  /** Stop running one job here and give it back to the queue (another worker takes it). */
  giveBack(jobId: string): boolean {
    const entry = this.runs.get(jobId);
    entry?.run.abort("stop");
    return entry !== undefined;
  }

  setConcurrency(n: number): void {
    this._concurrency = checkConcurrency(n);
    this.available ||= this.watchAvailable;
    this.maybeClaim();
  }

  private async shutdown(reason: string): Promise<void> {
    this.setState("stopping", reason);
    this.unwatch?.();
    this.unwatch = undefined;
    this.clearClaimTimers();
    // A claim already on its way may still hand us jobs: wait for it (startJob gives them straight back).
    await this.claimInFlight;
    const pending = [...this.runs.values()];
    for (const { run } of pending) run.abort("stop");
    await Promise.all([...pending.map((r) => r.done), ...this.givingBack]);
    this.unmine?.();
    this.unmine = undefined;
    this.unconnection?.();
    this.unconnection = undefined;
    this.available = this.watchAvailable = false;
    this.setState("stopped", reason);
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async advertisedCapabilities(): Promise<string[]> {
    const all = [...new Set(await this.options.handlers.capabilities())].sort();
    const only = this.options.onlyCapabilities;
    if (!only) return all;
    const missing = only.filter((c) => !all.includes(c));
    if (missing.length) {
      throw new Error(`capabilities not provided by any handler: ${missing.join(", ")} (available: ${all.join(", ")})`);
    }
    return all.filter((c) => only.includes(c));
  }

  private onWatch(v: WatchResult): void {
    if (this._state === "stopped" || this._state === "stopping") return;
    this.available = this.watchAvailable = Boolean(v?.available);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    if (!this.available && typeof v?.nextAvailableAt === "number") {
      const delay = Math.max(0, v.nextAvailableAt - Date.now());
      this.wakeTimer = setTimeout(() => {
        this.wakeTimer = undefined;
        this.available = true;
        this.maybeClaim();
      }, delay);
    }
    this.maybeClaim();
  }

  private maybeClaim(): void {
    if (this._state !== "running" || !this.available || this.claimRetryTimer) return;
    if (this.claiming) {
      this.claimWanted = true;
      return;
    }
    const free = this._concurrency - this.runs.size;
    if (free <= 0) return;
    this.claiming = true;
    this.claimWanted = false;
    const claim = this.options.client.claim(this.capabilities, free).then(
      (jobs) => {
        this.claiming = false;
        this.claimBackoff.reset();
        for (const job of jobs ?? []) this.startJob(job);
        if (jobs?.length === 0) this.available = false;
        if ((jobs?.length ?? 0) > 0 || this.claimWanted) {
          this.available = this.available || this.claimWanted;
          this.maybeClaim();
        }
      },
      (e) => {
        this.claiming = false;
        if (this.onServerError(e, "claim")) return;
        if (this._state !== "running") return;
        this.claimRetryTimer = setTimeout(() => {
          this.claimRetryTimer = undefined;
          this.maybeClaim();
        }, this.claimBackoff.next());
      },
    );
    const tracked: Promise<void> = claim.finally(() => {
      if (this.claimInFlight === tracked) this.claimInFlight = undefined;
    });
    this.claimInFlight = tracked;
  }

  private startJob(job: ClaimedJob): void {
    if (this._state === "stopping" || this._state === "stopped") {
      // Claimed while shutting down: give it straight back, and let shutdown wait for that.
      const giving = this.options.client.release(job.leaseId).catch(() => undefined);
      this.givingBack.add(giving);
      void giving.finally(() => this.givingBack.delete(giving));
      return;
    }
    const handler = this.options.handlers.get(job.type);
    const run = new JobRun(job, handler, this.options.client, this.runOptions, {
      onProgress: (progress, status) => this.emit("jobProgress", { jobId: job.jobId, progress, status }),
      onOutput: (text) => this.emit("jobOutput", { jobId: job.jobId, text }),
      onError: (message, code) => this.emit("error", { message, code }),
      onKeyError: (e) => this.onServerError(e, "job"),
    });
    const entry = { run, done: Promise.resolve() };
    this.runs.set(job.jobId, entry);
    this.watchMine();
    // Announce the job before its handler can report anything about it.
    this.emit("jobStarted", { jobId: job.jobId, type: job.type, attempt: job.attempt });
    entry.done = run.run().then((outcome) => this.onJobEnd(run, outcome));
  }

  private onJobEnd(run: JobRun, outcome: JobOutcome): void {
    this.runs.delete(run.job.jobId);
    this.totals[outcome.kind === "succeeded" ? "succeeded" : outcome.kind]++;
    this.emit("jobFinished", {
      jobId: run.job.jobId,
      type: run.job.type,
      outcome: outcome.kind,
      error: outcome.kind === "failed" ? outcome.error : outcome.kind === "lost" ? outcome.reason : undefined,
      durationMs: Date.now() - run.startedAt,
    });
    if (outcome.kind === "succeeded") this.consecutiveFailures = 0;
    if (outcome.kind === "failed" && outcome.handlerFault) {
      this.consecutiveFailures++;
      const limit = this.options.maxConsecutiveFailures ?? 5;
      if (this.consecutiveFailures >= limit) {
        this.pause(`auto-paused after ${this.consecutiveFailures} failed jobs in a row (last: ${outcome.error})`);
      }
    }
    if (this.runs.size === 0) {
      if (this._state === "draining") void this.stop("drained");
    }
    this.available ||= this.watchAvailable;
    this.maybeClaim();
  }

  /**
   * From the first job on, the worker's own-jobs query delivers cancels between heartbeats. It stays subscribed
   * until stop: subscribing and unsubscribing around every job cost more than half the engine's time per job,
   * and an unchanged query costs nothing while idle.
   */
  private watchMine(): void {
    if (this.unmine) return;
    this.unmine = this.options.client.mine(
      (entries: MineEntry[]) => {
        for (const entry of entries) {
          if (entry.cancel || entry.cancelRequested) this.runs.get(entry.jobId)?.run.abort("cancel");
        }
      },
      (e) => this.onServerError(e, "mine"),
    );
  }

  /** Returns true when the error stopped the worker. */
  private onServerError(e: unknown, what: string): boolean {
    if (isKeyError(e)) {
      const code = errorCode(e);
      const why = code === "revoked" ? "this worker's key was revoked" : "the server rejected this worker's key";
      void this.stop(`${why} (${code}): ${errorMessage(e)}`);
      return true;
    }
    if ((what === "watch" || what === "claim") && PERMANENT_CODES.has(errorCode(e) ?? "")) {
      // Asking again would fail the same way (e.g. a capability the server does not accept).
      void this.stop(`the server refused this worker's ${what} (${errorCode(e)}): ${errorMessage(e)}`);
      return true;
    }
    this.emit("error", { message: `${what} failed: ${errorMessage(e)}`, code: errorCode(e) });
    return false;
  }

  private clearClaimTimers(): void {
    if (this.claimRetryTimer) clearTimeout(this.claimRetryTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.claimRetryTimer = undefined;
    this.wakeTimer = undefined;
  }

  private setState(state: WorkerState, reason?: string): void {
    const previous = this._state;
    this._state = state;
    this.reason = reason;
    if (previous !== state) this.emit("state", { state, previous, reason });
  }
}

function checkConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new RangeError(`concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${n}`);
  }
  return n;
}
