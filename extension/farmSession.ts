import * as vscode from "vscode";
import type { FarmConnection } from "./farmConnection";
import { convexFarmClient, Worker, type HandlerSource, type WorkerSnapshot } from "./worker";
import type { PolicyDecision } from "./policy/policy";

export type SessionTarget = { url: string; apiKey: string; concurrency: number };

export type EngineView = { connected: boolean; running: number; pausedReason?: string; stoppedReason?: string };

/**
 * The engine's life in this window: one Convex client and one Worker while the donor donates, driven by the
 * policy decision. Paused by policy → take no new work (running jobs finish at low OS priority); off or left
 * → stop, giving running jobs back to the queue.
 */
export class FarmSession implements vscode.Disposable {
  private releaseClient: (() => void) | undefined;
  private worker: Worker | undefined;
  private target: SessionTarget | undefined;
  private policyPause: string | undefined;
  private stoppedReason: string | undefined;
  /** What this machine gave in this window, across every start and stop of the engine. */
  readonly contribution = { succeeded: 0, failed: 0, canceled: 0, busyMs: 0 };
  private readonly unsubscribers: Array<() => void> = [];

  constructor(
    private readonly connection: FarmConnection,
    private readonly handlers: HandlerSource,
    private readonly log: vscode.LogOutputChannel,
    private readonly onChange: () => void,
  ) {}

  /** Bring the engine in line with who we are (target) and what the policy says. */
  async apply(target: SessionTarget | undefined, decision: PolicyDecision): Promise<void> {
    if (!target || (!decision.donate && "off" in decision && decision.off)) {
      await this.stop("donating switched off");
      return;
    }
    if (this.target && (this.target.url !== target.url || this.target.apiKey !== target.apiKey)) {
      await this.stop("farm changed");
    }
    if (!decision.donate) {
      this.policyPause = decision.reason;
      this.worker?.pause(decision.reason);
      this.onChange();
      return;
    }
    this.policyPause = undefined;
    if (!this.worker) await this.begin(target);
    const worker = this.worker;
    if (!worker) return;
    if (worker.concurrency !== target.concurrency) worker.setConcurrency(target.concurrency);
    if (worker.state === "paused") worker.resume();
    this.onChange();
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
    if (!this.view()?.pausedReason) return false;
    this.worker?.resume();
    this.onChange();
    return true;
  }

  /** Stop running one job on this machine; it goes back to the queue for another worker. */
  giveBack(jobId: string): boolean {
    return this.worker?.giveBack(jobId) ?? false;
  }

  snapshot(): WorkerSnapshot | undefined {
    return this.worker?.snapshot();
  }

  view(): EngineView | undefined {
    const worker = this.worker;
    if (!worker) return this.stoppedReason ? { connected: false, running: 0, stoppedReason: this.stoppedReason } : undefined;
    const snap = worker.snapshot();
    const autoPaused = snap.state === "paused" && snap.reason !== this.policyPause ? snap.reason : undefined;
    return { connected: snap.connected, running: snap.running.length, pausedReason: autoPaused };
  }

  dispose(): void {
    void this.stop("window closing");
  }

  private async begin(target: SessionTarget): Promise<void> {
    this.stoppedReason = undefined;
    const lease = this.connection.acquire();
    if (!lease) return;
    this.target = target;
    this.releaseClient = lease.release;
    const worker = new Worker({ client: convexFarmClient(lease.client, lease.apiKey), handlers: this.handlers, concurrency: target.concurrency });
    this.worker = worker;
    this.unsubscribers.push(
      worker.on("state", (e) => {
        this.log.info(`Worker ${e.state}${e.reason ? `: ${e.reason}` : ""}`);
        if (e.state === "stopped" && this.worker === worker) {
          // The engine stopped itself (revoked key, no handlers…): keep the reason visible, and say what to do.
          this.stoppedReason = e.reason;
          void this.stop(e.reason ?? "stopped");
          if (e.reason && /revoked|rejected this worker's key/.test(e.reason)) {
            void vscode.window
              .showErrorMessage(`Farmhand stopped: ${e.reason}. Join again with a new token from your operator.`, "Join a Farm…")
              .then((choice) => choice && vscode.commands.executeCommand("farmhand.join"));
          }
        }
        this.onChange();
      }),
      worker.on("jobStarted", (e) => {
        this.log.info(`Job ${e.jobId} (${e.type}) started, attempt ${e.attempt}`);
        this.onChange();
      }),
      worker.on("jobProgress", () => this.onChange()),
      worker.on("jobFinished", (e) => {
        this.contribution.busyMs += e.durationMs;
        if (e.outcome === "succeeded" || e.outcome === "failed" || e.outcome === "canceled") this.contribution[e.outcome]++;
        this.log.info(`Job ${e.jobId} (${e.type}) ${e.outcome} in ${e.durationMs} ms${e.error ? `: ${e.error}` : ""}`);
        this.onChange();
      }),
      worker.on("connection", (e) => {
        this.log.info(e.connected ? "Connected to the farm" : "Lost the connection to the farm; reconnecting");
        this.onChange();
      }),
      worker.on("error", (e) => this.log.warn(`Worker: ${e.message}${e.code ? ` (${e.code})` : ""}`)),
    );
    try {
      await worker.start();
    } catch (error) {
      this.log.error(`Could not start the worker: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
