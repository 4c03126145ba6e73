import { APPS_CAPABILITY } from "../../convex/contract";
import type { ClaimedJob, FarmCalls } from "./farmClient";
import type { HandlerSource } from "./handler";
import type { Holds } from "./holds";
import type { AppLabel } from "./jobLabel";
import { JobRun, type AbortReason, type JobOutcome, type JobRunCallbacks, type JobRunOptions } from "./jobRun";
import type { RunSpan, RunTracer } from "./tracing";
import type { RunningJobView, WorkerEvents } from "./workerTypes";

type Totals = Record<JobOutcome["kind"], number>;

export type JobTablePorts = {
  client: Pick<FarmCalls, "release"> & ConstructorParameters<typeof JobRun>[2];
  handlers: HandlerSource;
  tracer?: RunTracer;
  runOptions: JobRunOptions;
  holds: Holds;
  freeMemoryMB(): number;
  callbacks(job: ClaimedJob): JobRunCallbacks;
  started(e: WorkerEvents["jobStarted"]): void;
  memoryShort(e: WorkerEvents["memoryShort"]): void;
  releaseFailed(e: unknown): void;
  ended(run: JobRun, outcome: JobOutcome): void;
};

/** The jobs this engine runs: starting them (or giving them straight back), their ends, and the totals. */
export class JobTable {
  private readonly entries = new Map<string, { run: JobRun; done: Promise<void>; span?: RunSpan }>();
  private readonly givingBack = new Set<Promise<unknown>>();
  private readonly counts: Totals = { succeeded: 0, failed: 0, canceled: 0, released: 0, lost: 0 };
  private failures = 0;

  constructor(private readonly ports: JobTablePorts) {}

  get size(): number {
    return this.entries.size;
  }

  get failuresInARow(): number {
    return this.failures;
  }

  /** Running jobs that asked for a GPU (frozen ones included). */
  get gpuJobs(): number {
    return [...this.runs()].filter((run) => run.job.requirements?.gpu).length;
  }

  has(jobId: string): boolean {
    return this.entries.has(jobId);
  }

  runs(): JobRun[] {
    return [...this.entries.values()].map((e) => e.run);
  }

  totals(): Totals {
    return { ...this.counts };
  }

  resetFailures(): void {
    this.failures = 0;
  }

  /**
   * Run a claimed job, unless it wants more free memory than there is now: then it goes back at once (the engine
   * says it has no free slot, so the farm offers it elsewhere) and the holds wait for the memory.
   */
  launch(job: ClaimedJob, claimedAt: number): void {
    const neededMB = job.requirements?.minMemoryMB;
    const freeMB = neededMB === undefined ? 0 : this.ports.freeMemoryMB();
    if (neededMB !== undefined && freeMB < neededMB) {
      this.ports.holds.waitForMemory(neededMB);
      this.giveBackLease(job, (e) => this.ports.releaseFailed(e));
      this.ports.memoryShort({ jobId: job.jobId, type: job.type, neededMB, freeMB });
      return;
    }
    // app jobs (`app.<name>`, with their pinned version) all run through the one `apps` handler
    const handler = this.ports.handlers.get(job.app ? APPS_CAPABILITY : job.type);
    const span = this.ports.tracer?.begin(job, claimedAt);
    const traceparent = span ? span.traceparent : job.traceparent;
    const run = new JobRun(job, handler, this.ports.client, this.ports.runOptions, this.ports.callbacks(job), traceparent);
    const entry = { run, done: Promise.resolve(), span };
    this.entries.set(job.jobId, entry);
    // Announce the job before its handler can report anything about it.
    this.ports.started({ jobId: job.jobId, type: job.type, attempt: job.attempt, ...appOf(job) });
    entry.done = run.run().then((outcome) => this.end(run, outcome));
    if (this.ports.holds.mustYield(job)) run.abort("yield");
  }

  /** Hand a claimed job's lease straight back (the engine takes no work now); stopping waits for it. */
  giveBackLease(job: ClaimedJob, onError: (e: unknown) => void = () => undefined): void {
    const giving = this.ports.client.release({ leaseId: job.leaseId }).catch(onError);
    this.givingBack.add(giving);
    void giving.finally(() => this.givingBack.delete(giving));
  }

  abort(jobId: string, reason: AbortReason): boolean {
    const entry = this.entries.get(jobId);
    entry?.run.abort(reason);
    return entry !== undefined;
  }

  /** Give every running job back, and wait until they and every lease on its way back are done. */
  async abortAll(): Promise<void> {
    const pending = [...this.entries.values()];
    for (const { run } of pending) run.abort("stop");
    await Promise.all([...pending.map((e) => e.done), ...this.givingBack]);
  }

  views(): RunningJobView[] {
    return this.runs().map((run) => ({
      jobId: run.job.jobId,
      type: run.job.type,
      ...appOf(run.job),
      attempt: run.job.attempt,
      startedAt: run.startedAt,
      progress: run.progress,
      status: run.status,
      ...(run.suspendedSince === undefined ? {} : { suspendedSince: run.suspendedSince }),
    }));
  }

  private end(run: JobRun, outcome: JobOutcome): void {
    this.entries.get(run.job.jobId)?.span?.end(outcome);
    this.entries.delete(run.job.jobId);
    this.counts[outcome.kind]++;
    if (outcome.kind === "succeeded") this.failures = 0;
    if (outcome.kind === "failed" && outcome.handlerFault) this.failures++;
    this.ports.ended(run, outcome);
  }
}

/** `{ app }` of an app job (name and pinned version), nothing for another job. */
function appOf(job: ClaimedJob): { app?: AppLabel } {
  return job.app ? { app: { name: job.app.name, version: job.app.version } } : {};
}

/** What the engine says about a job that ended. */
export function finishedEvent(run: JobRun, outcome: JobOutcome, now: number): WorkerEvents["jobFinished"] {
  return {
    jobId: run.job.jobId,
    type: run.job.type,
    ...appOf(run.job),
    outcome: outcome.kind,
    error: outcome.kind === "failed" ? outcome.error : outcome.kind === "lost" ? outcome.reason : undefined,
    durationMs: now - run.startedAt,
  };
}
