import { LIMITS } from "../../convex/contract";
import { CheckpointUploader } from "./checkpointUploader";
import { inputsOf } from "./inputs";
import { errorCode, errorMessage, isKeyError, isRetryable, isStaleLease, messageOf } from "./errors";
import type { ClaimedJob, FarmCalls } from "./farmClient";
import { sleep, writeEnd, type JobOutcome } from "./jobEnd";
import { Heartbeat } from "./heartbeat";
import { TimeLimit } from "./timeLimit";
import type { EnergyGauge, EnergyMark } from "./energy";
import type { Freezer, Handler } from "./handler";
import { OutputBatcher } from "./outputBatcher";

export type { JobOutcome } from "./jobEnd";

/** `yield`: given back so another donor carries on (it could not be frozen, or stayed frozen too long). */
export type AbortReason = "cancel" | "stop" | "yield" | "timeout" | "lost";

export type JobRunOptions = {
  /** Default per-job time limit; a handler's own `timeoutMs` wins. */
  jobTimeoutMs: number;
  /** How long an aborted handler gets to wind down before the engine moves on. */
  graceMs: number;
  maxResultBytes: number;
  maxChunkBytes: number;
  outputFlushMs: number;
  /** A job frozen longer than this is given back to the queue. */
  suspendLimitMs: number;
  /** At most one checkpoint upload per this many ms per job (the latest saved wins). Default 5 s. */
  checkpointEveryMs?: number;
  /** Measures (or estimates) each job's energy, reported with its end; without it, none is reported. */
  energy?: EnergyGauge;
};

/**
 * One run's life as one state (instead of an "ended" flag beside an abort reason and a frozen-since time): running,
 * aborting for a reason, or ended; while not ended, frozen since when (the machine's owner is back).
 */
type RunPhase = { kind: "running"; frozenSince?: number } | { kind: "aborting"; reason: AbortReason; frozenSince?: number } | { kind: "ended" };

/** An app's own time limit ends its run first (with a clear error); the engine's backstop comes this much later. */
const APP_TIMEOUT_SLACK_MS = 10_000;

export type JobRunCallbacks = {
  onProgress(progress: number | undefined, status: string | undefined): void;
  onOutput(text: string): void;
  onError(message: string, code?: string): void;
  /** The server rejected this worker's key: the whole worker must stop. */
  onKeyError(e: unknown): void;
};

/**
 * One claimed job's life on this worker: run the handler, heartbeat, stream output, report the end.
 *
 * Hang policy: heartbeats go on only while the handler's promise is pending; for a process handler that means
 * while its process lives (a dead process rejects at once, and the job fails). A handler that never finishes
 * is stopped by the per-job time limit (the handler's `timeoutMs`, else the worker's `jobTimeoutMs`, default
 * 30 min): it is aborted, killed after the grace period, and its job failed without retry.
 */
export class JobRun {
  readonly startedAt = Date.now();
  progress: number | undefined;
  status: string | undefined;
  private readonly controller = new AbortController();
  private phase: RunPhase = { kind: "running" };
  private readonly heartbeat: Heartbeat;
  private readonly batcher: OutputBatcher;
  private readonly checkpoints: CheckpointUploader;
  /** The CPU time the handler's process reported, sent with the job's end (the donor's credit). */
  private cpuMs: number | undefined;
  /** Where the job's energy is measured from (taken as its handler starts). */
  private energyMark: Promise<EnergyMark> | undefined;
  private freezer: Freezer | undefined;
  private suspendLimitTimer: ReturnType<typeof setTimeout> | undefined;
  /** The per-job time limit: it does not run while the job is frozen. */
  private readonly timeLimit: TimeLimit;

  constructor(
    readonly job: ClaimedJob,
    private readonly handler: Handler | undefined,
    private readonly client: Pick<FarmCalls, "heartbeat" | "output" | "checkpoint" | "inputs" | "complete" | "fail" | "release">,
    private readonly options: JobRunOptions,
    private readonly callbacks: JobRunCallbacks,
    /** This run's trace context, for its handler (HandlerContext.traceparent). */
    private readonly traceparent?: string,
  ) {
    this.timeLimit = new TimeLimit(this.timeoutMs, () => this.abort("timeout"));
    this.heartbeat = new Heartbeat({
      everyMs: this.heartbeatEveryMs,
      send: () => {
        const suspended = this.suspendedSince !== undefined || undefined;
        return client.heartbeat({ leaseId: job.leaseId, progress: this.progress, status: this.status, suspended });
      },
      answered: (answer) => answer?.cancel && this.abort("cancel"),
      failed: (e) => this.onWriteError(e, "heartbeat"),
      goOn: () => this.phase.kind === "running" || this.abortReason === "timeout",
    });
    this.batcher = new OutputBatcher((chunk) => client.output({ leaseId: job.leaseId, chunk }).then(() => undefined), {
      maxChunkBytes: options.maxChunkBytes,
      flushDelayMs: options.outputFlushMs,
      onError: (e) => this.onWriteError(e, "output"),
    });
    this.checkpoints = new CheckpointUploader((data) => client.checkpoint({ leaseId: job.leaseId, data }).then(() => undefined), {
      everyMs: options.checkpointEveryMs ?? 5_000,
      onError: (e) => this.onWriteError(e, "checkpoint"),
    });
  }

  get heartbeatEveryMs(): number {
    return Math.max(50, Math.floor(this.job.leaseMs / 3));
  }

  /** Abort the handler. `cancel`: the server canceled it; `stop`/`yield`: give it back to the queue. */
  abort(reason: AbortReason): void {
    if (this.phase.kind !== "running") return;
    this.phase = { kind: "aborting", reason, frozenSince: this.phase.frozenSince };
    this.clearSuspendLimit();
    this.controller.abort(new Error(abortMessage(reason, this.timeoutMs)));
  }

  /** Since when this job is frozen, or undefined while it runs. */
  get suspendedSince(): number | undefined {
    return this.phase.kind === "ended" ? undefined : this.phase.frozenSince;
  }

  private get ended(): boolean {
    return this.phase.kind === "ended";
  }

  private get abortReason(): AbortReason | undefined {
    return this.phase.kind === "aborting" ? this.phase.reason : undefined;
  }

  /**
   * Freeze the job in place while the machine's owner uses it: no CPU, no time limit running, heartbeats that
   * say so. Returns false when it cannot be frozen (its handler gave no freezer): the caller gives it back.
   */
  suspend(): boolean {
    if (this.phase.kind !== "running") return true;
    if (!this.freezer) return false;
    if (this.phase.frozenSince !== undefined) return true;
    this.freezer.freeze();
    this.phase = { kind: "running", frozenSince: Date.now() };
    this.timeLimit.pause();
    this.armSuspendLimit();
    this.heartbeat.now();
    return true;
  }

  /** The donor changed the suspend limit: a job frozen now is held to the new one, counted from when it froze. */
  suspendLimitChanged(): void {
    if (this.phase.kind !== "running" || this.phase.frozenSince === undefined) return;
    this.clearSuspendLimit();
    this.armSuspendLimit();
  }

  private armSuspendLimit(): void {
    const left = Math.max(0, (this.suspendedSince ?? Date.now()) + this.options.suspendLimitMs - Date.now());
    this.suspendLimitTimer = setTimeout(() => {
      this.suspendLimitTimer = undefined;
      this.abort("yield");
    }, left);
  }

  /** Thaw a frozen job: it runs on where it stopped. */
  thaw(): void {
    if (this.phase.kind === "ended" || this.phase.frozenSince === undefined) return;
    this.phase = { ...this.phase, frozenSince: undefined };
    this.clearSuspendLimit();
    if (this.phase.kind !== "running") return;
    this.freezer?.thaw();
    this.timeLimit.run();
    this.heartbeat.now();
  }

  private get timeoutMs(): number {
    if (this.job.app) return this.job.app.timeoutMs + APP_TIMEOUT_SLACK_MS;
    return this.handler?.timeoutMs ?? this.options.jobTimeoutMs;
  }

  /** Run to the end; never throws. */
  async run(): Promise<JobOutcome> {
    const handler = this.handler;
    if (!handler) {
      // Types are routed, so this is a handler removed after the offer (a recipe gone): another worker may have it.
      const error = `no handler for job type "${this.job.type}" on this worker`;
      return this.finish({ kind: "failed", error, retryable: true, handlerFault: false });
    }
    this.energyMark = this.options.energy?.begin();
    this.heartbeat.start();
    this.timeLimit.run();
    const settled = this.runHandler(handler);
    const aborted = new Promise<void>((resolve) => this.controller.signal.addEventListener("abort", () => resolve()));
    await Promise.race([settled, aborted]);
    this.clearSuspendLimit();
    if (this.abortReason === "stop" || this.abortReason === "yield") {
      // Give the job back right away; the handler winds down (and is killed) in the background.
      this.heartbeat.stop();
      this.timeLimit.pause();
      this.batcher.discard();
      return this.finish({ kind: "released" });
    }
    if (this.abortReason) await Promise.race([settled, sleep(this.options.graceMs)]);
    this.timeLimit.pause();
    this.heartbeat.stop();
    const outcome = await this.outcomeOf(settled);
    if (outcome.kind === "lost") this.batcher.discard();
    else await this.batcher.close();
    return this.finish(outcome);
  }

  private async runHandler(handler: Handler): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
    try {
      const value = await handler.run(this.job.payload, {
        jobId: this.job.jobId,
        attempt: this.job.attempt,
        signal: this.controller.signal,
        progress: (fraction, status) => {
          if (this.ended) return;
          if (typeof fraction === "number" && Number.isFinite(fraction)) this.progress = Math.min(1, Math.max(0, fraction));
          if (typeof status === "string") this.status = status.slice(0, LIMITS.statusTextChars);
          this.callbacks.onProgress(this.progress, this.status);
        },
        output: (text) => {
          if (this.ended || typeof text !== "string") return;
          this.callbacks.onOutput(text);
          this.batcher.write(text);
        },
        onCpuMs: (ms) => {
          if (typeof ms === "number" && Number.isFinite(ms) && ms >= 0) this.cpuMs = Math.round(ms);
        },
        setFreezer: (freezer) => {
          if (!this.ended) this.freezer = freezer;
        },
        ...(this.job.app ? { app: this.job.app } : {}),
        ...(this.job.checkpoint !== undefined ? { checkpoint: this.job.checkpoint } : {}),
        ...(this.traceparent !== undefined ? { traceparent: this.traceparent } : {}),
        saveCheckpoint: (data) => {
          if (!this.ended && typeof data === "string") this.checkpoints.save(data);
        },
        ...inputsOf(this.client, this.job.leaseId),
      });
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private async outcomeOf(settled: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>): Promise<JobOutcome> {
    switch (this.abortReason) {
      case "lost":
        return { kind: "lost", reason: "the lease went stale" };
      case "cancel":
        return { kind: "canceled" };
      case "timeout":
        return {
          kind: "failed",
          error: `job timed out after ${this.timeoutMs} ms and was stopped`,
          retryable: false,
          handlerFault: true,
        };
    }
    const r = await settled;
    if (r.ok) return { kind: "succeeded", result: r.value === undefined ? null : r.value };
    return { kind: "failed", error: messageOf(r.error) || "handler failed", retryable: isRetryable(r.error), handlerFault: true };
  }

  /** Report the outcome to the server. Rewrites it when the server's answer changes what happened. */
  private async finish(outcome: JobOutcome): Promise<JobOutcome> {
    this.phase = { kind: "ended" };
    this.clearSuspendLimit();
    // A run that ends without its result leaves the job to another: its latest checkpoint goes first.
    if (outcome.kind === "released" || (outcome.kind === "failed" && outcome.retryable)) await this.checkpoints.flush();
    this.checkpoints.close();
    const energyJ = await this.energyUsed();
    try {
      return await writeEnd({ client: this.client, leaseId: this.job.leaseId, maxResultBytes: this.options.maxResultBytes, cpuMs: this.cpuMs, energyJ }, outcome);
    } catch (e) {
      if (isStaleLease(e)) return outcome.kind === "canceled" ? outcome : { kind: "lost", reason: errorMessage(e) };
      if (isKeyError(e)) {
        // The server refused the write (revoked key): the job did not end here, whatever the handler did.
        this.callbacks.onKeyError(e);
        return { kind: "lost", reason: errorMessage(e) };
      }
      // Unreported, the job is still running on the server until its lease runs out: it did not end here.
      const reason = `could not report job ${this.job.jobId}: ${errorMessage(e)}`;
      this.callbacks.onError(reason, errorCode(e));
      return { kind: "lost", reason };
    }
  }

  /** The job's energy (joules), when a gauge measures it and the job's CPU time is known; never throws. */
  private async energyUsed(): Promise<number | undefined> {
    const gauge = this.options.energy;
    if (!gauge || !this.energyMark) return undefined;
    try {
      return await gauge.end(await this.energyMark, this.cpuMs);
    } catch {
      return undefined;
    }
  }

  private clearSuspendLimit(): void {
    if (this.suspendLimitTimer) clearTimeout(this.suspendLimitTimer);
    this.suspendLimitTimer = undefined;
  }

  /** Handle a failed heartbeat/output write. Returns true when the error ended the job. */
  private onWriteError(e: unknown, what: string): boolean {
    if (isStaleLease(e)) {
      this.abort("lost");
      return true;
    }
    if (isKeyError(e)) {
      this.callbacks.onKeyError(e);
      return true;
    }
    if (what === "output" && errorCode(e) === "too_large") {
      // The job hit the server's output cap: the job goes on, its further output is dropped.
      this.batcher.discard();
      this.callbacks.onError(`output for job ${this.job.jobId} stopped: ${errorMessage(e)}`, "too_large");
      return false;
    }
    this.callbacks.onError(`${what} for job ${this.job.jobId} failed: ${errorMessage(e)}`, errorCode(e));
    return false;
  }
}

function abortMessage(reason: AbortReason, timeoutMs: number): string {
  switch (reason) {
    case "cancel":
      return "the job was canceled";
    case "stop":
      return "the worker is stopping";
    case "yield":
      return "the job was given back while this machine's owner uses it";
    case "timeout":
      return `the job timed out after ${timeoutMs} ms`;
    case "lost":
      return "the job's lease was lost";
  }
}
