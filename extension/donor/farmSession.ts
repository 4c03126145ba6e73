import * as vscode from "vscode";
import type { FarmConnection } from "./farmConnection";
import { convexFarmClient, Worker, type HandlerSource, type WorkerSnapshot } from "../worker";
import { errorMessage, type DescribedError } from "../worker/errors";
import { watchKeyRefusals } from "../worker/keyRefusals";
import { measureFacts } from "../worker/machineFacts";
import { freezesJobs, type PolicyDecision } from "../policy/policy";
import { GpuGuard } from "../policy/gpuGuard";
import { jobRows, type DonorFacts, type EngineFacts } from "../donorState/deriveDonorState";
import { refusedKeyText } from "../donorState/donorStateText";

/**
 * `suspendOnReturn`: freeze running jobs while the owner uses the machine (light and medium presets);
 * `suspendLimitMs`: give a job frozen that long back to the queue.
 */
export type SessionTarget = { url: string; apiKey: string; concurrency: number; suspendOnReturn?: boolean; suspendLimitMs?: number };

/**
 * The engine's life in this window: one Worker on the shared farm connection while the donor donates, driven by
 * the policy decision. Paused by policy → take no new work; running jobs finish at low OS priority (or, when the
 * owner is back and the preset says so, are frozen in place until donating resumes or the suspend limit gives
 * them back), then the worker and its connection go away until the policy says donate again. Off or left → stop, giving running jobs back.
 * Decisions are applied one at a time, always the latest, so an older decision can never win a race.
 */
export class FarmSession implements vscode.Disposable {
  private releaseClient: (() => void) | undefined;
  private worker: Worker | undefined;
  private target: SessionTarget | undefined;
  /** The worker is paused because the policy said so (as opposed to the engine pausing itself). */
  private pausedByPolicy = false;
  private stoppedReason: string | undefined;
  /** The farm refused this key; do not start again with it until the donor joins again. */
  private refusedKey: string | undefined;
  /** The farm refused the running worker's key (its code said so); the worker stops itself on it. */
  private keyRefusal: DescribedError | undefined;
  /** The worker's connection: up at least once since it started, and since when it is down. */
  private everConnected = false;
  private disconnectedSince: number | undefined;
  private pending: { target: SessionTarget | undefined; decision: PolicyDecision } | undefined;
  private applying: Promise<void> | undefined;
  /** What this machine gave in this window, across every start and stop of the engine. */
  readonly contribution = { succeeded: 0, failed: 0, canceled: 0, busyMs: 0 };
  private readonly unsubscribers: Array<() => void> = [];
  /** Freezes GPU jobs while another program uses the GPU (issue 23). */
  private gpuGuard: GpuGuard | undefined;

  constructor(
    private readonly connection: FarmConnection,
    private readonly handlers: HandlerSource,
    private readonly log: vscode.LogOutputChannel,
    private readonly onChange: () => void,
  ) {}

  /** Bring the engine in line with who we are (target) and what the policy says. */
  apply(target: SessionTarget | undefined, decision: PolicyDecision): Promise<void> {
    this.pending = { target, decision };
    this.applying ??= this.applyPending().finally(() => (this.applying = undefined));
    return this.applying;
  }

  /** Finish the running jobs, then stop. */
  async drain(): Promise<void> {
    await this.worker?.drain();
    await this.stop("finished current jobs");
  }

  async stop(reason: string): Promise<void> {
    const worker = this.worker;
    const releaseClient = this.releaseClient;
    this.worker = undefined;
    this.releaseClient = undefined;
    this.target = undefined;
    this.pausedByPolicy = false;
    this.gpuGuard?.dispose();
    this.gpuGuard = undefined;
    this.unsubscribers.splice(0).forEach((u) => u());
    if (worker) {
      await worker.stop(reason);
      this.log.info(`Worker stopped: ${reason}`);
    }
    releaseClient?.();
    this.onChange();
  }

  /** The engine paused itself (repeated failures): take work again. */
  resumeAfterAutoPause(): boolean {
    if (this.worker?.state !== "paused" || this.pausedByPolicy) return false;
    this.worker?.resume();
    this.onChange();
    return true;
  }

  /** Stop running one job on this machine; it goes back to the queue for another worker. */
  giveBack(jobId: string): boolean {
    return this.worker?.giveBack(jobId) ?? false;
  }

  /** Offer the registry's current handlers without giving back running jobs. */
  async refreshCapabilities(): Promise<void> {
    await this.worker?.refreshCapabilities();
  }

  snapshot(): WorkerSnapshot | undefined {
    return this.worker?.snapshot();
  }

  /** The engine as the donor state needs it; undefined while no worker exists. */
  engineFacts(): EngineFacts | undefined {
    const worker = this.worker;
    if (!worker) return undefined;
    const snap = worker.snapshot();
    if (snap.state === "stopped") return undefined;
    // Held since the first of its frozen jobs was frozen (issue 13).
    const frozenSince = snap.running.flatMap((j) => (j.suspendedSince === undefined ? [] : [j.suspendedSince]));
    return {
      phase: snap.state,
      connected: snap.connected,
      everConnected: this.everConnected,
      ...(this.disconnectedSince === undefined ? {} : { disconnectedSince: this.disconnectedSince }),
      pausedByPolicy: this.pausedByPolicy,
      ...(snap.reason === undefined ? {} : { reason: snap.reason }),
      jobs: jobRows(snap.running),
      ...(frozenSince.length ? { suspendedSince: Math.min(...frozenSince) } : {}),
    };
  }

  /** Why the engine stopped on its own (kept until it starts again). */
  stoppedFacts(): DonorFacts["stopped"] {
    if (this.worker || !this.stoppedReason) return undefined;
    const refusal = this.refusedKey ? this.keyRefusal : undefined;
    return { reason: this.stoppedReason, ...(refusal ? { refusal } : {}) };
  }

  dispose(): void {
    void this.stop("window closing");
  }

  private async applyPending(): Promise<void> {
    while (this.pending) {
      const { target, decision } = this.pending;
      this.pending = undefined;
      try {
        await this.applyNow(target, decision);
      } catch (error) {
        this.log.error(`Could not apply the donation policy: ${errorMessage(error)}`);
      }
    }
  }

  private async applyNow(target: SessionTarget | undefined, decision: PolicyDecision): Promise<void> {
    if (this.refusedKey !== undefined && target?.apiKey !== this.refusedKey) {
      // Joined again (or left): the refusal was about the old key.
      this.refusedKey = undefined;
      this.keyRefusal = undefined;
      this.stoppedReason = undefined;
    }
    if (!target || (!decision.donate && "off" in decision && decision.off)) {
      if (this.worker) await this.stop("donating switched off");
      return;
    }
    if (this.target && (this.target.url !== target.url || this.target.apiKey !== target.apiKey)) {
      await this.stop("farm changed");
    }
    if (this.worker && target.suspendLimitMs !== undefined) this.worker.setSuspendLimit(target.suspendLimitMs);
    if (!decision.donate) {
      await this.pauseForPolicy(decision.reason, freezesJobs(decision, target.suspendOnReturn === true));
      return;
    }
    if (!this.worker) {
      if (this.refusedKey) return; // the farm refused this key; joining again clears it
      await this.begin(target);
    }
    const worker = this.worker;
    if (!worker) return;
    if (worker.concurrency !== target.concurrency) worker.setConcurrency(target.concurrency);
    if (this.pausedByPolicy && worker.state === "paused") worker.resume();
    this.pausedByPolicy = false;
    this.onChange();
  }

  /**
   * Take no new work (`suspend`: and freeze the running jobs); once nothing runs, let go of the worker and the
   * connection until donating resumes.
   */
  private async pauseForPolicy(reason: string, suspend: boolean): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    if (worker.state === "running") this.pausedByPolicy = true;
    if (this.pausedByPolicy) worker.pause(reason, { suspend });
    if (this.pausedByPolicy && worker.snapshot().running.length === 0) await this.stop(`paused: ${reason}`);
    this.onChange();
  }

  private async begin(target: SessionTarget): Promise<void> {
    this.stoppedReason = undefined;
    this.everConnected = false;
    this.disconnectedSince = Date.now();
    const lease = this.connection.acquire();
    if (!lease) return;
    let worker: Worker;
    this.keyRefusal = undefined;
    const client = watchKeyRefusals(convexFarmClient(lease.client, lease.apiKey), (refusal) => (this.keyRefusal ??= refusal));
    try {
      worker = new Worker({
        client,
        handlers: this.handlers,
        concurrency: target.concurrency,
        suspendLimitMs: target.suspendLimitMs,
        measureFacts: () => measureFacts(),
      });
    } catch (error) {
      lease.release();
      throw error;
    }
    this.target = target;
    this.releaseClient = lease.release;
    this.worker = worker;
    this.gpuGuard = new GpuGuard(worker, (line) => this.log.info(line));
    this.gpuGuard.start();
    this.unsubscribers.push(
      worker.on("state", (e) => {
        this.log.info(`Worker ${e.state}${e.reason ? `: ${e.reason}` : ""}`);
        if (e.state === "stopped" && this.worker === worker) this.stoppedOnItsOwn(e.reason, target.apiKey);
        this.onChange();
      }),
      worker.on("jobStarted", (e) => {
        this.log.info(`Job ${e.jobId} (${e.type}) started, attempt ${e.attempt}`);
        this.onChange();
      }),
      worker.on("jobProgress", () => this.onChange()),
      worker.on("suspension", (e) => {
        this.log.info(e.held.length ? `Suspended while you use this machine: ${e.held.join(", ")}` : "No job is suspended");
        this.onChange();
      }),
      worker.on("jobFinished", (e) => {
        this.contribution.busyMs += e.durationMs;
        if (e.outcome === "succeeded" || e.outcome === "failed" || e.outcome === "canceled") this.contribution[e.outcome]++;
        this.log.info(`Job ${e.jobId} (${e.type}) ${e.outcome} in ${e.durationMs} ms${e.error ? `: ${e.error}` : ""}`);
        // Paused by policy and the last job is done: nothing left to hold the connection for.
        if (this.pausedByPolicy && this.worker === worker && worker.snapshot().running.length === 0) void this.stop("paused, no jobs left");
        this.onChange();
      }),
      worker.on("connection", (e) => {
        if (this.worker === worker) {
          this.everConnected ||= e.connected;
          this.disconnectedSince = e.connected ? undefined : Date.now();
        }
        this.log.info(e.connected ? "Connected to the farm" : "Lost the connection to the farm; reconnecting");
        this.onChange();
      }),
      worker.on("error", (e) => this.log.warn(`Worker: ${e.message}${e.code ? ` (${e.code})` : ""}`)),
    );
    try {
      await worker.start();
    } catch (error) {
      this.log.error(`Could not start the worker: ${errorMessage(error)}`);
    }
  }

  /** The engine stopped itself (revoked key, no handlers…): keep the reason visible, and say what to do. */
  private stoppedOnItsOwn(reason: string | undefined, apiKey: string): void {
    this.stoppedReason = reason;
    void this.stop(reason ?? "stopped");
    const refusal = this.keyRefusal;
    if (refusal) {
      this.refusedKey = apiKey;
      this.stoppedReason = `the farm refused this machine's key (${refusal.code}): ${refusal.message}`;
      void vscode.window
        .showErrorMessage(`Farmhand stopped: ${refusedKeyText(refusal)}`, "Join Again…")
        .then((choice) => choice && vscode.commands.executeCommand("farmhand.join"));
    }
  }
}
