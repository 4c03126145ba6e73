import { valueBytes, LIMITS } from "../../convex/contract";
import type { ClaimLoop } from "./claimLoop";
import { realClock, type Clock } from "./clock";
import { errorCode, errorMessage } from "./errors";
import { TypedEmitter } from "./events";
import type { ClaimedJob } from "./farmClient";
import type { FarmLink } from "./farmLink";
import type { Holds } from "./holds";
import type { JobOutcome, JobRun, JobRunOptions } from "./jobRun";
import { finishedEvent, type JobTable } from "./jobTable";
import { assembleEngine } from "./engineParts";
import type { PresenceReporter } from "./presence";
import type { SlotDeclaration } from "./slotDeclaration";
import { stopFor, stopText, type StopReason } from "./stopReason";
import { advertised, jobRunOptions, type WorkerEvents, type WorkerOptions, type WorkerSnapshot, type WorkerState, type WorkerStatus } from "./workerTypes";

export type { ByteAllowance, WorkerEvents, WorkerOptions, WorkerSnapshot, WorkerState, WorkerStatus, RunningJobView } from "./workerTypes";

export const MAX_CONCURRENCY = LIMITS.maxConcurrentJobs;

/**
 * The work-stealing engine, composed of one state machine per concern: the claim loop (doorbell → offers →
 * claim), the holds (frozen jobs, memory), the presence reporter, the table of running jobs. Idle, it holds one
 * subscription (workers:doorbell) and one timer (a presence call every 5 minutes), and makes no other call.
 */
export class Worker extends TypedEmitter<WorkerEvents> {
  private status: WorkerStatus = { state: "stopped" };
  private _concurrency: number;
  private capabilities: string[] = [];
  private readonly clock: Clock;
  private readonly runOptions: JobRunOptions;
  private readonly jobs: JobTable;
  private readonly claims: ClaimLoop;
  private readonly holds: Holds;
  private readonly presence: PresenceReporter;
  private readonly link: FarmLink;
  private readonly slots: SlotDeclaration;
  private stopped: Promise<void> | undefined;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly options: WorkerOptions) {
    super();
    this._concurrency = checkConcurrency(options.concurrency ?? 1);
    this.clock = options.clock ?? realClock;
    this.runOptions = jobRunOptions(options);
    const parts = assembleEngine(options, this.clock, this.runOptions, {
      status: () => this.status,
      live: () => this.live,
      concurrency: () => this._concurrency,
      capabilities: () => this.capabilities,
      emit: (name, event) => this.emit(name, event),
      stop: (reason) => void this.stop(reason),
      serverError: (e, what) => this.onServerError(e, what),
      startJob: (job, claimedAt) => this.startJob(job, claimedAt),
      jobEnded: (run, outcome) => this.onJobEnd(run, outcome),
    });
    ({ claims: this.claims, holds: this.holds, jobs: this.jobs, link: this.link, presence: this.presence, slots: this.slots } = parts);
  }

  get state(): WorkerState {
    return this.status.state;
  }

  get concurrency(): number {
    return this._concurrency;
  }

  /** Running jobs that asked for a GPU (frozen ones included). */
  get gpuJobs(): number {
    return this.jobs.gpuJobs;
  }

  snapshot(): WorkerSnapshot {
    const s = this.status;
    return {
      state: s.state,
      reason: statusText(s),
      ...("stop" in s && s.stop ? { stop: s.stop } : {}),
      ...(s.state === "paused" ? { pausedBy: s.by } : {}),
      connected: this.link.connected,
      concurrency: this._concurrency,
      capabilities: [...this.capabilities],
      running: this.jobs.views(),
      suspended: this.holds.suspended,
      totals: this.jobs.totals(),
    };
  }

  /** Start taking work. Resolves once subscribed (capabilities are probed first). */
  async start(): Promise<void> {
    if (this.status.state !== "stopped") return;
    this.setStatus({ state: "running", reason: "started" });
    this.stopped = undefined;
    this.jobs.resetFailures();
    try {
      this.capabilities = await this.advertisedCapabilities();
    } catch (e) {
      await this.stop({ kind: "startFailed", message: errorMessage(e) });
      throw e;
    }
    // Paused while the handlers were probed: still subscribe, so resume() finds work; stopped: nothing to do.
    if (!this.live) return;
    if (this.capabilities.length === 0) return this.stop({ kind: "noCapabilities" });
    this.link.subscribe();
    this.presence.start();
    this.claims.wantFull();
    void this.presence.reportFacts();
  }

  /**
   * Take no new work. Running jobs go on, or with `suspend` (the machine's owner is back) they are frozen in
   * place: those that cannot be frozen are given back at once, and a job frozen longer than `suspendLimitMs`
   * is given back then. Pausing again without `suspend` thaws them (they go on at low priority).
   */
  pause(reason = "paused", how: { suspend?: boolean } = {}): void {
    this.pauseBy("caller", reason, how.suspend === true);
  }

  /** Take work again; frozen jobs run on. */
  resume(): void {
    if (this.status.state !== "paused") return;
    this.jobs.resetFailures();
    this.holds.thaw();
    this.setStatus({ state: "running", reason: "resumed" });
    this.claims.wantFull();
  }

  /** Finish the running jobs, take no new ones, then stop. */
  drain(): Promise<void> {
    const state = this.status.state;
    if (state === "running" || state === "paused") {
      this.claims.holdRetry();
      this.setStatus({ state: "draining" });
      if (this.jobs.size === 0) return this.stop({ kind: "drained" });
      if (state === "running") void this.slots.declare();
    }
    if (this.status.state === "stopped") return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Abort running jobs, give their leases back, unsubscribe. */
  stop(reason: StopReason = { kind: "user" }): Promise<void> {
    if (this.status.state === "stopped") return Promise.resolve();
    this.stopped ??= this.shutdown(reason);
    return this.stopped;
  }

  /**
   * Re-read the handlers' capabilities (a handler was added or removed, Ollama's models changed) and, when they
   * changed, declare again with the new set (the waiting lines are per capability set). Running jobs are not touched.
   */
  async refreshCapabilities(): Promise<string[]> {
    if (!this.live) return this.capabilities;
    void this.presence.reportFacts();
    const next = await this.advertisedCapabilities();
    if (next.join() === this.capabilities.join() || !this.live) return this.capabilities;
    this.capabilities = next;
    this.emit("capabilities", { capabilities: [...next] });
    if (next.length === 0) this.pauseBy("engine", "no handler capabilities to offer", false);
    else void this.slots.declare();
    return next;
  }

  /** Stop running one job here and give it back to the queue (another worker takes it). */
  giveBack(jobId: string): boolean {
    return this.jobs.abort(jobId, "stop");
  }

  /** Takes effect at once, for jobs frozen now too (farmhand.suspendLimitMinutes changed while donating). */
  setSuspendLimit(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0) || ms === this.runOptions.suspendLimitMs) return;
    this.runOptions.suspendLimitMs = ms;
    for (const run of this.jobs.runs()) run.suspendLimitChanged();
  }

  setConcurrency(n: number): void {
    const before = this._concurrency;
    this._concurrency = checkConcurrency(n);
    if (this._concurrency !== before && this.status.state === "running") void this.slots.declare();
    this.claims.next();
  }

  /**
   * The download allowance changed other than by this engine's own jobs (the connection became metered or not, the
   * limit was changed): say what is left now, and claim if there is room.
   */
  allowanceChanged(): void {
    if (this.status.state === "running") void this.slots.declare();
    this.claims.next();
  }

  /**
   * Another program uses the GPU (issue 23), or one the donor named runs: freeze (or give back) the GPU jobs, and tell
   * the farm this machine has no GPU free until `false` thaws them (it reports its facts without the GPUs meanwhile).
   */
  holdGpuJobs(hold: boolean): void {
    if (hold === this.holds.gpuHeld) return;
    this.holds.holdGpu(hold);
    if (this.live) void this.presence.reportFacts();
  }

  /** Started and not on its way out. */
  private get live(): boolean {
    return this.status.state !== "stopped" && this.status.state !== "stopping";
  }

  private pauseBy(by: "caller" | "engine", reason: string, suspend: boolean): void {
    if (this.status.state === "running") {
      this.claims.holdRetry();
      this.setStatus({ state: "paused", by, reason });
      void this.slots.declare();
    } else if (this.status.state !== "paused") {
      return;
    }
    if (suspend) this.holds.suspend();
    else this.holds.thaw();
  }

  private async shutdown(reason: StopReason): Promise<void> {
    const wasStarted = this.link.open;
    this.holds.reset();
    this.setStatus({ state: "stopping", stop: reason });
    this.claims.holdRetry();
    this.presence.stop();
    // A claim already on its way may still hand us jobs: wait for it (startJob gives them straight back).
    await this.claims.settled();
    await this.jobs.abortAll();
    // Out of every waiting line, offers handed back: no offer waits out its time on a stopped engine. With a
    // refused key nothing more can be said.
    if (wasStarted && reason.kind !== "keyRefused") await this.slots.beforeStop();
    this.link.close();
    this.claims.reset();
    this.setStatus({ state: "stopped", stop: reason });
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async advertisedCapabilities(): Promise<string[]> {
    return advertised(await this.options.handlers.capabilities(), this.options.onlyCapabilities);
  }

  private startJob(job: ClaimedJob, claimedAt: number): void {
    // what the claim brought down, given back or not, came over the connection
    this.options.byteAllowance?.spend(downloadBytes(job));
    // A claim answered after a drain or stop began: a draining engine takes no new work, so the job goes straight
    // back; shutdown (which ends every drain) waits for that.
    if (this.status.state === "running" || this.status.state === "paused") this.jobs.launch(job, claimedAt);
    else this.jobs.giveBackLease(job);
  }

  private onJobEnd(run: JobRun, outcome: JobOutcome): void {
    this.holds.jobEnded();
    this.emit("jobFinished", finishedEvent(run, outcome, this.clock.now()));
    const failures = this.jobs.failuresInARow;
    if (outcome.kind === "failed" && outcome.handlerFault && failures >= (this.options.maxConsecutiveFailures ?? 5)) {
      this.pauseBy("engine", `auto-paused after ${failures} failed jobs in a row (last: ${outcome.error})`, false);
    }
    if (this.jobs.size === 0 && this.status.state === "draining") void this.stop({ kind: "drained" });
    // A job that ended without a last write (its lease went stale, or the write failed) told the server
    // nothing about this engine's free slot: say it now.
    if (outcome.kind === "lost" && this.status.state === "running") void this.slots.declare();
    this.claims.next();
  }

  /** Returns true when the error stopped the worker. */
  private onServerError(e: unknown, what: string): boolean {
    const stop = stopFor(e, what);
    if (stop) void this.stop(stop);
    else this.emit("error", { message: `${what} failed: ${errorMessage(e)}`, code: errorCode(e) });
    return stop !== undefined;
  }

  private setStatus(next: WorkerStatus): void {
    const previous = this.status.state;
    this.status = next;
    if (previous !== next.state) {
      this.emit("state", { state: next.state, previous, reason: statusText(next), ...("stop" in next && next.stop ? { stop: next.stop } : {}) });
    }
  }
}

/** The status as a line for a log. */
function statusText(s: WorkerStatus): string | undefined {
  switch (s.state) {
    case "running":
    case "paused":
      return s.reason;
    case "draining":
      return "draining";
    case "stopping":
    case "stopped":
      return s.stop && stopText(s.stop);
  }
}

/** The bytes a claimed job brought: its payload and the checkpoint it resumes from, as the farm measures them. */
function downloadBytes(job: ClaimedJob): number {
  return valueBytes(job.payload ?? null) + (job.checkpoint?.length ?? 0);
}

function checkConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new RangeError(`concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${n}`);
  }
  return n;
}
