import { LIMITS } from "../../convex/contract";
import type { JobOutcome, JobRunOptions } from "./jobRun";
import type { Clock } from "./clock";
import type { FarmClient, ReportedFacts } from "./farmClient";
import type { HandlerSource } from "./handler";
import type { AppLabel } from "./jobLabel";
import type { ByteAllowance } from "./byteAllowance";

export type { ByteAllowance } from "./byteAllowance";
import type { StopReason } from "./stopReason";
import type { RunTracer } from "./tracing";

export type WorkerState = "stopped" | "running" | "paused" | "draining" | "stopping";

/**
 * The engine's one state. `paused.by`: `caller` when its owner paused it (a policy, a signal), `engine` when it
 * paused itself (failures in a row, no capability left to offer).
 */
export type WorkerStatus =
  | { state: "stopped"; stop?: StopReason }
  | { state: "running"; reason: "started" | "resumed" }
  | { state: "paused"; by: "caller" | "engine"; reason: string }
  | { state: "draining" }
  | { state: "stopping"; stop: StopReason };

export type WorkerEvents = {
  /** `reason`: the status as a line for a log; `stop`: why it stopped (or is stopping). */
  state: { state: WorkerState; previous: WorkerState; reason?: string; stop?: StopReason };
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
  /** The engine's timers (default: the real clock). */
  clock?: Clock;
  /** A span per run, exported by the caller's tracer (extension/tracing/); none: no traces. */
  tracer?: RunTracer;
  /** A daily download allowance (a metered connection); without it, none. */
  byteAllowance?: ByteAllowance;
};

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
  /** Why it stopped (or is stopping). */
  stop?: StopReason;
  /** Paused by whom (see WorkerStatus). */
  pausedBy?: "caller" | "engine";
  connected: boolean;
  concurrency: number;
  capabilities: string[];
  running: RunningJobView[];
  /** Paused with its running jobs frozen in place (they are in `running`, with `suspendedSince`). */
  suspended: boolean;
  totals: { succeeded: number; failed: number; canceled: number; released: number; lost: number };
};

/** How long a job may stay frozen before it is given back to the queue (farmhand.suspendLimitMinutes). */
const DEFAULT_SUSPEND_LIMIT_MS = 10 * 60_000;

export function jobRunOptions(options: Partial<JobRunOptions>): JobRunOptions {
  return {
    jobTimeoutMs: options.jobTimeoutMs ?? 30 * 60_000,
    graceMs: options.graceMs ?? 5_000,
    maxResultBytes: options.maxResultBytes ?? LIMITS.resultBytes,
    maxChunkBytes: options.maxChunkBytes ?? LIMITS.outputChunkBytes,
    outputFlushMs: options.outputFlushMs ?? 200,
    suspendLimitMs: options.suspendLimitMs ?? DEFAULT_SUSPEND_LIMIT_MS,
    checkpointEveryMs: options.checkpointEveryMs ?? 5_000,
    ...(options.energy ? { energy: options.energy } : {}),
  };
}

/** The capabilities to advertise: the handlers' own, narrowed to `only` (each of which some handler must provide). */
export function advertised(capabilities: string[], only: string[] | undefined): string[] {
  const all = [...new Set(capabilities)].sort();
  if (!only) return all;
  const missing = only.filter((c) => !all.includes(c));
  if (missing.length) {
    throw new Error(`capabilities not provided by any handler: ${missing.join(", ")} (available: ${all.join(", ")})`);
  }
  return all.filter((c) => only.includes(c));
}
