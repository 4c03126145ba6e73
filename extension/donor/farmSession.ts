import type { ConvexClient } from "convex/browser";
import * as vscode from "vscode";
import type { FarmConnection } from "./farmConnection";
import { convexFarmClient, Worker, type ByteAllowance, type HandlerSource, type WorkerSnapshot } from "../worker";
import { energyGauge, type EnergyGauge } from "../worker/energy";
import { DEFAULT_WATTS_PER_CORE } from "../policy/donorSettings";
import { errorMessage } from "../worker/errors";
import { stopText, type StopReason } from "../worker/stopReason";
import { measureFacts } from "../worker/machineFacts";
import { freezesJobs, type PolicyDecision } from "../policy/policy";
import { GpuGuard } from "../policy/gpuGuard";
import { jobRows, type DonorFacts, type EngineFacts } from "../donorState/deriveDonorState";
import { refusedKeyText } from "../donorState/donorStateText";
import { connectionChanged, opened, type ConnectionHistory } from "../donorState/connectionHistory";
import { tracesEndpoint, workerTracer } from "../tracing/loadTracer";
import type { RunTracer } from "../worker/tracing";

/**
 * `suspendOnReturn`: freeze running jobs while the owner uses the machine (light and medium presets);
 * `suspendLimitMs`: give a job frozen that long back to the queue; `gpuHeldBy`: a program of
 * farmhand.pauseGpuWhileRunning runs (GPU jobs are frozen, none taken); `meteredLimit`: on a metered connection,
 * farmhand.meteredLimitMB in bytes (the engine declares what is left of it).
 */
export type SessionTarget = {
  url: string;
  apiKey: string;
  concurrency: number;
  suspendOnReturn?: boolean;
  suspendLimitMs?: number;
  gpuHeldBy?: string;
  meteredLimit?: number;
  /** farmhand.wattsPerCore: the energy estimate's power per busy core, where the CPU's counter cannot be read. */
  wattsPerCore?: number;
};

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
  /** Why the engine last stopped on its own, and with which key (kept until it starts again). */
  private lastStop: { reason: StopReason; apiKey: string } | undefined;
  /** The worker's connection since it started. */
  private connectionHistory: ConnectionHistory = opened(Date.now());
  private pending: { target: SessionTarget | undefined; decision: PolicyDecision } | undefined;
  private applying: Promise<void> | undefined;
  /** What this machine gave in this window, across every start and stop of the engine. */
  readonly contribution = { succeeded: 0, failed: 0, canceled: 0, busyMs: 0 };
  private readonly unsubscribers: Array<() => void> = [];
  /** Freezes GPU jobs while another program uses the GPU (issue 23). */
  private gpuGuard: GpuGuard | undefined;
  /** A span per run while `farmhand.otlpEndpoint` is set (read when the engine starts). */
  private tracer: RunTracer | undefined;
  /** Who holds the GPU jobs now: the guard (another program's GPU use), a program the donor named. */
  private readonly gpuHolds = { guard: false, program: undefined as string | undefined };
  /** The metered limit the engine last declared against (undefined: not metered). */
  private meteredLimit: number | undefined;
  /** How each job's energy is measured (or estimated) on this machine: found once, kept for the window's life. */
  private readonly gauge: Promise<EnergyGauge>;
  private gaugeFound: EnergyGauge | undefined;
  private wattsPerCore = DEFAULT_WATTS_PER_CORE;

  constructor(
    private readonly connection: FarmConnection,
    private readonly handlers: HandlerSource,
    private readonly log: vscode.LogOutputChannel,
    private readonly onChange: () => void,
    /** What jobs may still download today on a metered connection (the engine declares it, and spends from it). */
    private readonly allowance?: ByteAllowance,
  ) {
    this.gauge = energyGauge({ wattsPerCore: () => this.wattsPerCore }).then((g) => (this.gaugeFound = g));
  }

  /** How this machine's energy figures are made, once known: measured by the CPU's counter, or estimated. */
  energyMethod(): DonorFacts["energy"] {
    const g = this.gaugeFound;
    return g && { method: g.method, source: g.source };
  }

  /** Bring the engine in line with who we are (target) and what the policy says. */
  apply(target: SessionTarget | undefined, decision: PolicyDecision): Promise<void> {
    this.pending = { target, decision };
    this.applying ??= this.applyPending().finally(() => (this.applying = undefined));
    return this.applying;
  }

  /** Finish the running jobs, then stop. */
  async drain(): Promise<void> {
    await this.worker?.drain();
    await this.stop({ kind: "drained" });
  }

  async stop(reason: StopReason): Promise<void> {
    const worker = this.worker;
    const releaseClient = this.releaseClient;
    this.worker = undefined;
    this.releaseClient = undefined;
    this.target = undefined;
    this.gpuGuard?.dispose();
    this.gpuGuard = undefined;
    this.gpuHolds.guard = false;
    this.gpuHolds.program = undefined;
    this.unsubscribers.splice(0).forEach((u) => u());
    if (worker) {
      await worker.stop(reason);
      this.log.info(`Worker stopped: ${stopText(reason)}`);
    }
    const tracer = this.tracer;
    this.tracer = undefined;
    await tracer?.close();
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
      connection: this.connectionHistory,
      pausedByPolicy: snap.pausedBy === "caller",
      ...(snap.reason === undefined ? {} : { reason: snap.reason }),
      jobs: jobRows(snap.running),
      ...(frozenSince.length ? { suspendedSince: Math.min(...frozenSince) } : {}),
    };
  }

  /** Why the engine stopped on its own (kept until it starts again). */
  stoppedFacts(): DonorFacts["stopped"] {
    const stop = this.lastStop?.reason;
    if (this.worker || !stop) return undefined;
    if (stop.kind !== "keyRefused") return { reason: stopText(stop) };
    const refusal = { kind: "refused" as const, code: stop.code, message: stop.message };
    return { reason: `the farm refused this machine's key (${stop.code}): ${stop.message}`, refusal };
  }

  dispose(): void {
    void this.stop({ kind: "user", detail: "window closing" });
    void this.gauge.then((g) => g.dispose());
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
    const refusedKey = this.refusedKey;
    // Joined again (or left): the refusal was about the old key.
    if (refusedKey !== undefined && target?.apiKey !== refusedKey) this.lastStop = undefined;
    if (!target || (!decision.donate && "off" in decision && decision.off)) {
      if (this.worker) await this.stop({ kind: "user", detail: "donating switched off" });
      return;
    }
    if (this.target && (this.target.url !== target.url || this.target.apiKey !== target.apiKey)) {
      await this.stop({ kind: "user", detail: "farm changed" });
    }
    if (this.worker && target.suspendLimitMs !== undefined) this.worker.setSuspendLimit(target.suspendLimitMs);
    if (target.wattsPerCore !== undefined) this.wattsPerCore = target.wattsPerCore;
    if (this.worker) this.followMachine(this.worker, target);
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
    this.followMachine(worker, target);
    if (worker.concurrency !== target.concurrency) worker.setConcurrency(target.concurrency);
    if (this.pausedByPolicy) worker.resume();
    this.onChange();
  }

  /** A program the donor named holds the GPU jobs (or no longer does); the metered limit came or went. */
  private followMachine(worker: Worker, target: SessionTarget): void {
    if (target.gpuHeldBy !== this.gpuHolds.program) {
      this.log.info(target.gpuHeldBy ? `GPU jobs frozen: ${target.gpuHeldBy} is running (farmhand.pauseGpuWhileRunning)` : "GPU jobs go on: the program that held them ended");
      this.gpuHolds.program = target.gpuHeldBy;
      worker.holdGpuJobs(this.gpuHolds.guard || this.gpuHolds.program !== undefined);
    }
    if (target.meteredLimit !== this.meteredLimit) {
      this.meteredLimit = target.meteredLimit;
      worker.allowanceChanged();
    }
  }

  /**
   * Take no new work (`suspend`: and freeze the running jobs); once nothing runs, let go of the worker and the
   * connection until donating resumes.
   */
  private async pauseForPolicy(reason: string, suspend: boolean): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // Not one the engine paused itself (failures in a row): that one waits for its owner.
    if (worker.state === "running" || this.pausedByPolicy) worker.pause(reason, { suspend });
    if (this.pausedByPolicy && worker.snapshot().running.length === 0) await this.stop({ kind: "policy", detail: reason });
    this.onChange();
  }

  private async begin(target: SessionTarget): Promise<void> {
    this.lastStop = undefined;
    this.connectionHistory = opened(Date.now());
    const energy = await this.gauge;
    const lease = this.connection.acquire();
    if (!lease) return;
    let worker: Worker;
    const client = convexFarmClient(lease.client, lease.apiKey);
    const tracer = await this.startTracing(lease);
    try {
      worker = new Worker({
        client,
        tracer,
        handlers: this.handlers,
        concurrency: target.concurrency,
        suspendLimitMs: target.suspendLimitMs,
        measureFacts: () => measureFacts(),
        ...(this.allowance ? { byteAllowance: this.allowance } : {}),
        energy,
      });
    } catch (error) {
      await tracer?.close();
      lease.release();
      throw error;
    }
    this.tracer = tracer;
    this.target = target;
    this.releaseClient = lease.release;
    this.worker = worker;
    this.meteredLimit = target.meteredLimit;
    // The guard's hold and a named program's hold are one hold on the engine: the GPU jobs go on when neither holds.
    const guarded = {
      get gpuJobs() {
        return worker.gpuJobs;
      },
      holdGpuJobs: (hold: boolean) => {
        this.gpuHolds.guard = hold;
        worker.holdGpuJobs(hold || this.gpuHolds.program !== undefined);
      },
    };
    this.gpuGuard = new GpuGuard(guarded, (line) => this.log.info(line));
    this.gpuGuard.start();
    this.unsubscribers.push(
      worker.on("state", (e) => {
        this.log.info(`Worker ${e.state}${e.reason ? `: ${e.reason}` : ""}`);
        if (e.state === "stopped" && this.worker === worker) this.stoppedOnItsOwn(e.stop ?? { kind: "user" }, target.apiKey);
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
        if (this.pausedByPolicy && this.worker === worker && worker.snapshot().running.length === 0) void this.stop({ kind: "policy", detail: "no jobs left" });
        this.onChange();
      }),
      worker.on("connection", (e) => {
        if (this.worker === worker) this.connectionHistory = connectionChanged(this.connectionHistory, e.connected, Date.now());
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

  /**
   * The tracer of this engine's runs when `farmhand.otlpEndpoint` names an OTLP/HTTP collector (the OpenTelemetry SDK is
   * loaded only then); none otherwise, or when it cannot be loaded (said in the log; donating goes on).
   */
  private async startTracing(lease: { client: ConvexClient; apiKey: string }): Promise<RunTracer | undefined> {
    const endpoint = vscode.workspace.getConfiguration("farmhand").get<string>("otlpEndpoint")?.trim();
    const url = endpoint ? tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }) : undefined;
    if (!url) return undefined;
    try {
      const tracer = await workerTracer({ url, serviceName: "farmhand-worker", client: lease.client, apiKey: lease.apiKey });
      this.log.info(`Traces: a span per job run to ${url}`);
      return tracer;
    } catch (error) {
      this.log.warn(`Traces are off: the tracer could not be loaded (${errorMessage(error)})`);
      return undefined;
    }
  }

  /** The worker is paused because its owner (the policy) said so, not because it paused itself. */
  private get pausedByPolicy(): boolean {
    return this.worker?.snapshot().pausedBy === "caller";
  }

  /** The farm refused this key; do not start again with it until the donor joins again. */
  private get refusedKey(): string | undefined {
    return this.lastStop?.reason.kind === "keyRefused" ? this.lastStop.apiKey : undefined;
  }

  /** The engine stopped itself (revoked key, no handlers…): keep the reason visible, and say what to do. */
  private stoppedOnItsOwn(reason: StopReason, apiKey: string): void {
    void this.stop(reason);
    this.lastStop = { reason, apiKey };
    if (reason.kind === "keyRefused") {
      void vscode.window
        .showErrorMessage(`Farmhand stopped: ${refusedKeyText(reason)}`, "Join Again…")
        .then((choice) => choice && vscode.commands.executeCommand("farmhand.join"));
    }
  }
}
