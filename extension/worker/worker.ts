import { freemem } from "node:os";
import { APPS_CAPABILITY, LIMITS, TIMING } from "../../convex/contract";
import { Backoff } from "./backoff";
import { errorCode, errorMessage, isKeyError } from "./errors";
import { TypedEmitter } from "./events";
import type { ClaimedJob, DoorbellValue, FarmClient, ReportedFacts, Slots } from "./farmClient";
import type { HandlerSource } from "./handler";
import type { AppLabel } from "./jobLabel";
import { JobRun, type JobOutcome, type JobRunOptions } from "./jobRun";

export type WorkerState = "stopped" | "running" | "paused" | "draining" | "stopping";

export type WorkerEvents = {
  state: { state: WorkerState; previous: WorkerState; reason?: string };
  /** `app`: an app job's app and pinned version. */
  jobStarted: { jobId: string; type: string; attempt: number; app?: AppLabel };
  jobProgress: { jobId: string; progress?: number; status?: string };
  jobOutput: { jobId: string; text: string };
  jobFinished: { jobId: string; type: string; app?: AppLabel; outcome: JobOutcome["kind"]; error?: string; durationMs: number };
  error: { message: string; code?: string };
  connection: { connected: boolean };
  capabilities: { capabilities: string[] };
  /** Jobs were frozen (the owner is using the machine) or thawed; `held`: the jobs frozen now. */
  suspension: { held: string[] };
  /** A claimed job asked for more free memory than there is now: it went back; work is taken again once there is. */
  memoryShort: { jobId: string; type: string; neededMB: number; freeMB: number };
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
  /** How often an engine holding only its subscriptions says it is still there. */
  presenceEveryMs?: number;
  /** Free memory now, in MB (default: the OS's count of available memory). */
  freeMemoryMB?: () => number;
  /** While a job waits for memory, how often the engine looks (locally; it asks the farm nothing meanwhile). */
  memoryCheckEveryMs?: number;
  /** Measure this machine (cores, memory, GPUs): reported at start, and again when it changed on a refresh. */
  measureFacts?: () => Promise<ReportedFacts>;
};

/** How long a job may stay frozen before it is given back to the queue (farmhand.suspendLimitMinutes). */
const DEFAULT_SUSPEND_LIMIT_MS = 10 * 60_000;

export type RunningJobView = {
  jobId: string;
  type: string;
  /** An app job's app and pinned version. */
  app?: AppLabel;
  attempt: number;
  startedAt: number;
  progress?: number;
  status?: string;
  /** Frozen since then (the machine's owner is using it); absent while the job runs. */
  suspendedSince?: number;
};

export type WorkerSnapshot = {
  state: WorkerState;
  reason?: string;
  connected: boolean;
  concurrency: number;
  capabilities: string[];
  running: RunningJobView[];
  /** Paused with its running jobs frozen in place (they are in `running`, with `suspendedSince`). */
  suspended: boolean;
  totals: { succeeded: number; failed: number; canceled: number; released: number; lost: number };
};

const PERMANENT_CODES = new Set(["invalid_argument", "forbidden"]);

/** How long a stopping engine waits for its last "take nothing more" to reach the server. */
const STOP_DECLARE_WAIT_MS = 2_000;

/** The key was refused: nothing more can be said to the server with it. */
function isKeyReason(reason: string): boolean {
  return /worker.s key/.test(reason);
}

export const MAX_CONCURRENCY = LIMITS.maxConcurrentJobs;

/**
 * The work-stealing loop. Idle, it holds one subscription (workers:doorbell, its own offers and cancel
 * notices) and one timer (a presence call every 5 minutes), and makes no other call: the server's
 * dispatcher offers it jobs when there are some, and the doorbell rings. It claims exactly its offers; a
 * finished job's last write says how many jobs it runs at once, so it waits for the next offer without
 * another call.
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
  /** Paused for the owner's return: running jobs are frozen, and jobs that start meanwhile are given back. */
  private suspended = false;
  /** Another program uses the GPU: GPU jobs are frozen or given back (holdGpuJobs). */
  private gpuHeld = false;
  private lastHeld = "";

  /** Offers the doorbell shows that this engine has not claimed yet. */
  private offers = new Set<string>();
  /** Counts doorbell values, so a claim's answer can tell whether a newer value arrived meanwhile. */
  private bellValues = 0;
  /** Claim up to the free slots (reading the lane heads) on the next chance: at start, after resume, reconnect or resync. */
  private fullClaimWanted = false;
  private claimInFlight: Promise<void> | undefined;
  private readonly givingBack = new Set<Promise<unknown>>();
  private claiming = false;
  private claimWanted = false;
  private claimRetryTimer: ReturnType<typeof setTimeout> | undefined;
  private presenceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly claimBackoff: Backoff;
  private unbell: (() => void) | undefined;
  private unconnection: (() => void) | undefined;
  private stopped: Promise<void> | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly runOptions: JobRunOptions;
  /** The client each job's run reports through: its last write also says how many jobs this engine runs now. */
  private readonly jobClient: FarmClient;
  /** A job needing this much free memory went back for want of it: take no work until the machine has it. */
  private memoryShortMB: number | undefined;
  private memoryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The facts the farm last accepted from this engine (JSON), so unchanged facts are not sent again. */
  private reportedFacts: string | undefined;

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
      suspendLimitMs: options.suspendLimitMs ?? DEFAULT_SUSPEND_LIMIT_MS,
      checkpointEveryMs: options.checkpointEveryMs ?? 5_000,
    };
    const client = options.client;
    this.jobClient = {
      doorbell: (onValue, onError) => client.doorbell(onValue, onError),
      claim: (capabilities, max) => client.claim(capabilities, max),
      ready: (capabilities, slots, stopping) => client.ready(capabilities, slots, stopping),
      presence: () => client.presence(),
      heartbeat: (leaseId, progress, status, suspended) => client.heartbeat(leaseId, progress, status, suspended),
      output: (leaseId, chunk) => client.output(leaseId, chunk),
      ...(client.checkpoint ? { checkpoint: (leaseId: string, data: string) => client.checkpoint!(leaseId, data) } : {}),
      ...(client.inputs ? { inputs: (leaseId: string, cursor: string | null) => client.inputs!(leaseId, cursor) } : {}),
      complete: (leaseId, result, _slots, cpuMs) => client.complete(leaseId, result, this.slotsNow(), cpuMs),
      fail: (leaseId, error, retryable, _slots, cpuMs) => client.fail(leaseId, error, retryable, this.slotsNow(), cpuMs),
      release: (leaseId) => client.release(leaseId, this.slotsNow()),
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
        ...appOf(run.job),
        attempt: run.job.attempt,
        startedAt: run.startedAt,
        progress: run.progress,
        status: run.status,
        ...(run.suspendedSince === undefined ? {} : { suspendedSince: run.suspendedSince }),
      })),
      suspended: this.suspended,
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
    let wasOnline = false;
    this.unconnection = client.onConnectionChange?.((connected) => {
      // Back after a drop (not the first connect): an offer to us may have passed on meanwhile and taken us
      // out of the waiting lines, so ask again.
      const reconnected = connected && wasOnline && !this.connected;
      wasOnline ||= connected;
      this.connected = connected;
      this.emit("connection", { connected });
      if (reconnected) this.wantFullClaim();
    });
    if (!client.onConnectionChange) this.connected = true;
    this.unbell = client.doorbell(
      (v) => this.onDoorbell(v),
      (e) => this.onServerError(e, "doorbell"),
    );
    this.schedulePresence();
    this.wantFullClaim();
    void this.reportFacts();
  }

  /**
   * Take no new work. Running jobs go on, or with `suspend` (the machine's owner is back) they are frozen in
   * place: those that cannot be frozen are given back at once, and a job frozen longer than `suspendLimitMs`
   * is given back then. Pausing again without `suspend` thaws them (they go on at low priority).
   */
  pause(reason = "paused", how: { suspend?: boolean } = {}): void {
    if (this._state === "running") {
      this.clearClaimTimer();
      this.setState("paused", reason);
      void this.declare();
    } else if (this._state !== "paused") {
      return;
    }
    if (how.suspend) this.suspendJobs();
    else this.thawJobs();
  }

  /** Take work again; frozen jobs run on. */
  resume(): void {
    if (this._state !== "paused") return;
    this.consecutiveFailures = 0;
    this.thawJobs();
    this.setState("running", "resumed");
    this.wantFullClaim();
  }

  /** Finish the running jobs, take no new ones, then stop. */
  drain(): Promise<void> {
    if (this._state === "running" || this._state === "paused") {
      this.clearClaimTimer();
      const wasRunning = this._state === "running";
      this.setState("draining", "draining");
      if (this.runs.size === 0) return this.stop("drained");
      if (wasRunning) void this.declare();
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
    void this.reportFacts();
    const next = await this.advertisedCapabilities();
    const state = this._state as WorkerState; // may have changed while the handlers were probed
    if (next.join() === this.capabilities.join() || state === "stopped" || state === "stopping") return this.capabilities;
    this.capabilities = next;
    this.emit("capabilities", { capabilities: [...next] });
    if (next.length === 0) {
      this.pause("no handler capabilities to offer");
      return next;
    }
    // The waiting lines are per capability set: declare again with the new set.
    void this.declare();
    return next;
  }

  /** Stop running one job here and give it back to the queue (another worker takes it). */
  giveBack(jobId: string): boolean {
    const entry = this.runs.get(jobId);
    entry?.run.abort("stop");
    return entry !== undefined;
  }

  /** Takes effect at once, for jobs frozen now too (farmhand.suspendLimitMinutes changed while donating). */
  setSuspendLimit(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0) || ms === this.runOptions.suspendLimitMs) return;
    this.runOptions.suspendLimitMs = ms;
    for (const { run } of this.runs.values()) run.suspendLimitChanged();
  }

  setConcurrency(n: number): void {
    const before = this._concurrency;
    this._concurrency = checkConcurrency(n);
    if (this._concurrency !== before && this._state === "running") void this.declare();
    this.maybeClaim();
  }

  /** Running jobs that asked for a GPU (frozen ones included). */
  get gpuJobs(): number {
    return [...this.runs.values()].filter(({ run }) => run.job.requirements?.gpu).length;
  }

  /**
   * Another program uses the GPU (issue 23): freeze the running GPU jobs (`requirements.gpu`; one that cannot be frozen
   * is given back) and give back any GPU job that starts meanwhile; `false` thaws them, unless the whole engine is
   * suspended. Other jobs are untouched.
   */
  holdGpuJobs(hold: boolean): void {
    if (hold === this.gpuHeld) return;
    this.gpuHeld = hold;
    for (const { run } of this.runs.values()) {
      if (!run.job.requirements?.gpu) continue;
      if (!hold) {
        if (!this.suspended) run.thaw();
      } else if (!run.suspend()) run.abort("yield");
    }
    this.emitSuspension();
  }

  private suspendJobs(): void {
    this.suspended = true;
    for (const { run } of this.runs.values()) {
      if (!run.suspend()) run.abort("yield");
    }
    this.emitSuspension();
  }

  private thawJobs(): void {
    if (!this.suspended) return;
    this.suspended = false;
    for (const { run } of this.runs.values()) if (!(this.gpuHeld && run.job.requirements?.gpu)) run.thaw();
    this.emitSuspension();
  }

  /** Say which jobs are frozen now, when that changed (a policy that pauses again for the same reason changes nothing). */
  private emitSuspension(): void {
    const held = [...this.runs.values()].filter(({ run }) => run.suspendedSince !== undefined).map(({ run }) => run.job.jobId as string);
    const key = held.join();
    if (key === this.lastHeld) return;
    this.lastHeld = key;
    this.emit("suspension", { held });
  }

  /** Measure the machine and tell the farm, unless it already knows these facts. Never throws. */
  private async reportFacts(): Promise<void> {
    const measure = this.options.measureFacts;
    const client = this.options.client;
    if (!measure || !client.reportFacts) return;
    try {
      const facts = await measure();
      const json = JSON.stringify(facts);
      if (json === this.reportedFacts || this._state === "stopped" || this._state === "stopping") return;
      await client.reportFacts(facts);
      this.reportedFacts = json;
    } catch (e) {
      this.onServerError(e, "reportFacts");
    }
  }

  /**
   * The job wants more free memory than this machine has now: give it back at once (saying this engine has no
   * free slot, so the farm offers it elsewhere), and look again locally until the memory is there.
   */
  private holdForMemory(job: ClaimedJob, neededMB: number, freeMB: number): void {
    this.memoryShortMB = Math.min(this.memoryShortMB ?? neededMB, neededMB);
    this.offers.delete(job.jobId);
    const giving = this.jobClient.release(job.leaseId).catch((e: unknown) => void this.onServerError(e, "release"));
    this.givingBack.add(giving);
    void giving.finally(() => this.givingBack.delete(giving));
    this.emit("memoryShort", { jobId: job.jobId, type: job.type, neededMB, freeMB });
    this.scheduleMemoryCheck();
  }

  private scheduleMemoryCheck(): void {
    if (this.memoryTimer) return;
    this.memoryTimer = setTimeout(() => {
      this.memoryTimer = undefined;
      const needed = this.memoryShortMB;
      if (needed === undefined || this._state === "stopped" || this._state === "stopping") return;
      if (this.freeMemoryMB() < needed) return this.scheduleMemoryCheck();
      this.memoryShortMB = undefined;
      // Free slots again: say so, and the farm offers work (the job that went back, or another).
      if (this._state === "running") this.wantFullClaim();
    }, this.options.memoryCheckEveryMs ?? 5_000);
  }

  private clearMemoryWait(): void {
    if (this.memoryTimer) clearTimeout(this.memoryTimer);
    this.memoryTimer = undefined;
    this.memoryShortMB = undefined;
  }

  private freeMemoryMB(): number {
    return this.options.freeMemoryMB ? this.options.freeMemoryMB() : Math.floor(freemem() / (1024 * 1024));
  }

  private async shutdown(reason: string): Promise<void> {
    const wasStarted = this.unbell !== undefined;
    this.suspended = false;
    this.lastHeld = "";
    this.clearMemoryWait();
    this.setState("stopping", reason);
    this.clearClaimTimer();
    this.clearPresence();
    // A claim already on its way may still hand us jobs: wait for it (startJob gives them straight back).
    await this.claimInFlight;
    const pending = [...this.runs.values()];
    for (const { run } of pending) run.abort("stop");
    await Promise.all([...pending.map((r) => r.done), ...this.givingBack]);
    // Out of every waiting line, offers handed back: no offer waits out its time on a stopped engine.
    if (wasStarted && !isKeyReason(reason)) await this.declareBeforeStop();
    this.unbell?.();
    this.unbell = undefined;
    this.unconnection?.();
    this.unconnection = undefined;
    this.offers.clear();
    this.fullClaimWanted = false;
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

  private onDoorbell(v: DoorbellValue): void {
    if (this._state === "stopped" || this._state === "stopping") return;
    for (const jobId of v.cancel) this.runs.get(jobId)?.run.abort("cancel");
    this.bellValues++;
    this.offers = new Set(v.offers.map((o) => o.jobId as string).filter((id) => !this.runs.has(id)));
    if (v.resync) this.wantFullClaim();
    else this.maybeClaim();
  }

  private wantFullClaim(): void {
    this.fullClaimWanted = true;
    this.maybeClaim();
  }

  /** How many jobs this engine runs at once right now, as the server should count it. */
  private slotsNow(): Slots {
    if (this._state !== "running") return 0;
    // Waiting for memory: no free slot until the machine has it.
    return this.memoryShortMB === undefined ? this._concurrency : Math.min(this._concurrency, this.runs.size);
  }

  /** Tell the server how many jobs this engine runs at once now (it waits for offers for what is free). */
  private declare(stopping = false): Promise<void> {
    const declared = this.options.client.ready(this.capabilities, this.slotsNow(), stopping || undefined).then(
      () => undefined,
      (e) => void this.onServerError(e, "ready"),
    );
    return declared;
  }

  /** On the way out, with a bound: a stop must not hang on a connection that is gone. */
  private async declareBeforeStop(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_DECLARE_WAIT_MS)));
    await Promise.race([this.declare(true), bound]);
    clearTimeout(timer);
  }

  /**
   * Claim what the doorbell offers (exactly that many, so the server reads only this worker's own rows), or,
   * when a full claim is wanted, up to the free slots: that one reads the lane heads and, if it finds fewer
   * jobs than slots, records this worker as waiting.
   */
  private maybeClaim(): void {
    if (this._state !== "running" || this.claimRetryTimer || this.memoryShortMB !== undefined) return;
    if (this.claiming) {
      this.claimWanted = true;
      return;
    }
    const free = this._concurrency - this.runs.size;
    const full = this.fullClaimWanted;
    if (free <= 0) {
      // Offers wait for the job that is ending (the server only offers what this engine declared room for).
      // A resync is answered with a declaration: there is no room to claim into.
      if (full) {
        this.fullClaimWanted = false;
        void this.declare();
      }
      return;
    }
    const max = full ? free : Math.min(free, this.offers.size);
    if (max <= 0) return;
    this.claiming = true;
    this.claimWanted = false;
    this.fullClaimWanted = false;
    const asked = [...this.offers];
    const bellBefore = this.bellValues;
    const claim = this.options.client.claim(this.capabilities, max).then(
      (jobs) => {
        this.claiming = false;
        this.claimBackoff.reset();
        // The claim takes the best offers, which may not be the ones this engine saw: only a doorbell value
        // newer than the claim says which are left. Without one, what it asked for is taken or gone.
        if (this.bellValues === bellBefore) for (const id of asked) this.offers.delete(id);
        for (const job of jobs) this.startJob(job);
        if (this.claimWanted || this.offers.size > 0 || this.fullClaimWanted) this.maybeClaim();
      },
      (e) => {
        this.claiming = false;
        if (full) this.fullClaimWanted = true;
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
    if (this._state === "draining" || this._state === "stopping" || this._state === "stopped") {
      // A claim answered after a drain or stop began: a draining engine takes no new work, so give the job
      // straight back; shutdown (which ends every drain) waits for that.
      const giving = this.options.client.release(job.leaseId).catch(() => undefined);
      this.givingBack.add(giving);
      void giving.finally(() => this.givingBack.delete(giving));
      return;
    }
    const neededMB = job.requirements?.minMemoryMB;
    const freeMB = neededMB === undefined ? 0 : this.freeMemoryMB();
    if (neededMB !== undefined && freeMB < neededMB) return this.holdForMemory(job, neededMB, freeMB);
    this.offers.delete(job.jobId);
    // app jobs (`app.<name>`, with their pinned version) all run through the one `apps` handler
    const handler = this.options.handlers.get(job.app ? APPS_CAPABILITY : job.type);
    const run = new JobRun(job, handler, this.jobClient, this.runOptions, {
      onProgress: (progress, status) => this.emit("jobProgress", { jobId: job.jobId, progress, status }),
      onOutput: (text) => this.emit("jobOutput", { jobId: job.jobId, text }),
      onError: (message, code) => this.emit("error", { message, code }),
      onKeyError: (e) => this.onServerError(e, "job"),
    });
    const entry = { run, done: Promise.resolve() };
    this.runs.set(job.jobId, entry);
    // Announce the job before its handler can report anything about it.
    this.emit("jobStarted", { jobId: job.jobId, type: job.type, attempt: job.attempt, ...appOf(job) });
    entry.done = run.run().then((outcome) => this.onJobEnd(run, outcome));
    // Claimed just as the owner came back (or took the GPU): it has not got far, so another donor takes it.
    if (this.suspended || (this.gpuHeld && job.requirements?.gpu)) run.abort("yield");
  }

  private onJobEnd(run: JobRun, outcome: JobOutcome): void {
    this.runs.delete(run.job.jobId);
    if (this.suspended || this.gpuHeld) this.emitSuspension();
    this.totals[outcome.kind]++;
    this.emit("jobFinished", {
      jobId: run.job.jobId,
      type: run.job.type,
      ...appOf(run.job),
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
    // A job that ended without a last write (its lease went stale, or the write failed) told the server
    // nothing about this engine's free slot: say it now.
    if (outcome.kind === "lost" && this._state === "running") void this.declare();
    this.maybeClaim();
  }

  /** One presence call every presenceEveryMs while started; online = a call within the last 6 minutes. */
  private schedulePresence(): void {
    this.clearPresence();
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = undefined;
      if (this._state === "stopped" || this._state === "stopping") return;
      this.options.client.presence().catch((e) => this.onServerError(e, "presence"));
      this.schedulePresence();
    }, this.options.presenceEveryMs ?? TIMING.presenceEveryMs);
  }

  private clearPresence(): void {
    if (this.presenceTimer) clearTimeout(this.presenceTimer);
    this.presenceTimer = undefined;
  }

  /** Returns true when the error stopped the worker. */
  private onServerError(e: unknown, what: string): boolean {
    if (isKeyError(e)) {
      const code = errorCode(e);
      const why = code === "revoked" ? "this worker's key was revoked" : "the server rejected this worker's key";
      void this.stop(`${why} (${code}): ${errorMessage(e)}`);
      return true;
    }
    if ((what === "claim" || what === "ready") && PERMANENT_CODES.has(errorCode(e) ?? "")) {
      // Asking again would fail the same way (e.g. a capability the server does not accept).
      void this.stop(`the server refused this worker's ${what} (${errorCode(e)}): ${errorMessage(e)}`);
      return true;
    }
    this.emit("error", { message: `${what} failed: ${errorMessage(e)}`, code: errorCode(e) });
    return false;
  }

  private clearClaimTimer(): void {
    if (this.claimRetryTimer) clearTimeout(this.claimRetryTimer);
    this.claimRetryTimer = undefined;
  }

  private setState(state: WorkerState, reason?: string): void {
    const previous = this._state;
    this._state = state;
    this.reason = reason;
    if (previous !== state) this.emit("state", { state, previous, reason });
  }
}

/** `{ app }` of an app job (name and pinned version), nothing for another job. */
function appOf(job: ClaimedJob): { app?: AppLabel } {
  return job.app ? { app: { name: job.app.name, version: job.app.version } } : {};
}

function checkConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new RangeError(`concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${n}`);
  }
  return n;
}
