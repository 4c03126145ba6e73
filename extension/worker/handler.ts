import type { ClaimedJob, InputsPage } from "./farmClient";

/** One input of a job: a parent's result (jobs submitted with `dependsOn`). */
export type JobInput = InputsPage["page"][number];

/** The app version an `app.<name>` job runs (name, version, sha256, memoryMB, timeoutMs), as the claim hands it. */
export type JobAppPin = NonNullable<ClaimedJob["app"]>;

/**
 * How a running job is frozen in place and thawed again (POSIX: SIGSTOP and SIGCONT to its process group).
 * Both must be quick and must not throw; thawing a job that has ended does nothing.
 */
export type Freezer = { freeze(): void; thaw(): void };

/** What the engine gives a handler for one job. */
export type HandlerContext = {
  jobId: string;
  attempt: number;
  /** Aborted when the job is canceled, the worker stops, or the job times out. */
  signal: AbortSignal;
  /** Report progress as a fraction 0..1 and/or a short status text. */
  progress(fraction?: number, status?: string): void;
  /** Stream text output (batched by the engine before it goes to the server). */
  output(text: string): void;
  /**
   * The CPU time the job's process used, in ms, when it could be measured (a process-pool run calls it once
   * before it settles); the engine sends it with the job's end, as the donor's credit. Never called for work
   * done inside another program (an Ollama request): the server then credits wall time.
   */
  onCpuMs?(cpuMs: number): void;
  /**
   * A handler whose job can be frozen in place says how, once it has started it. The engine freezes it while the
   * machine's owner uses the machine; a job without a freezer is given back to the queue instead.
   */
  setFreezer?(freezer: Freezer): void;
  /** An app job's pinned version: set only for jobs of type `app.<name>`, which the `apps` handler runs. */
  app?: JobAppPin;
  /** The checkpoint (base64) an earlier run of this job saved: where this run resumes. */
  checkpoint?: string;
  /**
   * Keep a checkpoint (base64, at most 512 KiB decoded) for the job's next run, should this one not finish (a
   * retry, a release, another donor). The engine uploads the latest every few seconds; later ones replace it.
   */
  saveCheckpoint?: (data: string) => void;
  /** Its parents' results (a job submitted with `dependsOn`), read page by page as the iteration goes. */
  inputs?: () => AsyncIterable<JobInput>;
  /**
   * The W3C trace context of this run (`00-<trace id>-<span id>-<flags>`): the worker's span of the run when it
   * traces, else the one the job was submitted with. A recipe's process gets it as TRACEPARENT.
   */
  traceparent?: string;
};

/** A job handler. `run` resolves with the result (a JSON value) or throws (see HandlerError for retry). */
export interface Handler {
  /** The job type this handler runs. */
  readonly type: string;
  /**
   * Everything this handler lets the worker advertise; by default just `[type]`. May probe the machine
   * (Ollama adds `ollama:<model>` per local model, and advertises nothing when Ollama is not running).
   */
  capabilities?(): string[] | Promise<string[]>;
  /** A per-job time limit overriding the worker's default. */
  readonly timeoutMs?: number;
  run(payload: unknown, ctx: HandlerContext): Promise<unknown>;
}

/** Where the engine finds handlers; the registry in extension/handlers implements it. */
export interface HandlerSource {
  get(type: string): Handler | undefined;
  /** Exactly the capabilities of the registered handlers. */
  capabilities(): Promise<string[]>;
}
