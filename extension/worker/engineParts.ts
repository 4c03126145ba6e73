import { freemem } from "node:os";
import { TIMING } from "../../convex/contract";
import { Backoff } from "./backoff";
import { allowanceUsed, maxBytes } from "./byteAllowance";
import { ClaimLoop } from "./claimLoop";
import type { Clock } from "./clock";
import { decorate, type ClaimedJob } from "./farmClient";
import { FarmLink } from "./farmLink";
import { Holds } from "./holds";
import type { JobOutcome, JobRun, JobRunOptions } from "./jobRun";
import { JobTable } from "./jobTable";
import { PresenceReporter } from "./presence";
import { SlotDeclaration } from "./slotDeclaration";
import { keyRefusalOf, type StopReason } from "./stopReason";
import type { WorkerEvents, WorkerOptions, WorkerStatus } from "./workerTypes";

/** What the parts ask of the engine that composes them. */
export type EngineSide = {
  status(): WorkerStatus;
  /** Started and not on its way out. */
  live(): boolean;
  concurrency(): number;
  capabilities(): string[];
  emit<K extends keyof WorkerEvents>(name: K, event: WorkerEvents[K]): void;
  stop(reason: StopReason): void;
  /** True when the error stopped the engine. */
  serverError(e: unknown, what: string): boolean;
  startJob(job: ClaimedJob, claimedAt: number): void;
  jobEnded(run: JobRun, outcome: JobOutcome): void;
};

/**
 * The engine's parts, wired to each other and to the engine: the client every call goes through (a refused key
 * stops the engine; each job's end says the free slots), the slot declaration, the claim loop, the holds, the job
 * table, the subscription and the presence reporter.
 */
export function assembleEngine(options: WorkerOptions, clock: Clock, runOptions: JobRunOptions, engine: EngineSide) {
  const freeMemory = options.freeMemoryMB ?? (() => Math.floor(freemem() / (1024 * 1024)));
  // what jobs may still download (a metered connection's allowance), said with every declaration of slots
  const bytesLeft = () => options.byteAllowance?.left();
  const client = decorate(options.client, {
    args: (name, args) => (name === "complete" || name === "fail" || name === "release" ? { ...args, slots: slots.now(), ...maxBytes(bytesLeft()) } : args),
    onError: (_name, e) => {
      const refused = keyRefusalOf(e);
      if (refused) engine.stop(refused);
    },
  });
  const slots: SlotDeclaration = new SlotDeclaration({
    client,
    clock,
    state: () => engine.status().state,
    concurrency: () => engine.concurrency(),
    capabilities: () => engine.capabilities(),
    running: () => jobs.size,
    memoryHeld: () => holds.memoryHeld,
    bytesLeft,
    failed: (e) => void engine.serverError(e, "ready"),
  });
  const claims: ClaimLoop = new ClaimLoop({
    client,
    clock,
    backoff: new Backoff(options.claimBackoffMs ?? 500, 30_000),
    capabilities: () => engine.capabilities(),
    freeSlots: () => (engine.status().state === "running" && !holds.memoryHeld && !allowanceUsed(bytesLeft()) ? engine.concurrency() - jobs.size : undefined),
    bytesLeft,
    declare: () => void slots.declare(),
    start: (job, claimedAt) => engine.startJob(job, claimedAt),
    failed: (e) => engine.serverError(e, "claim"),
  });
  const holds: Holds = new Holds({
    clock,
    runs: () => jobs.runs(),
    freeMemoryMB: freeMemory,
    memoryCheckEveryMs: options.memoryCheckEveryMs ?? 5_000,
    heldChanged: (held) => engine.emit("suspension", { held }),
    // Free slots again: say so, and the farm offers work (the job that went back, or another).
    memoryBack: () => engine.status().state === "running" && claims.wantFull(),
  });
  const jobs: JobTable = new JobTable({
    client,
    handlers: options.handlers,
    tracer: options.tracer,
    runOptions: runOptions,
    holds: holds,
    freeMemoryMB: freeMemory,
    callbacks: ({ jobId }) => ({
      onProgress: (progress, status) => engine.emit("jobProgress", { jobId, progress, status }),
      onOutput: (text) => engine.emit("jobOutput", { jobId, text }),
      onError: (message, code) => engine.emit("error", { message, code }),
      onKeyError: (e) => void engine.serverError(e, "job"),
    }),
    started: (e) => engine.emit("jobStarted", e),
    memoryShort: (e) => engine.emit("memoryShort", e),
    releaseFailed: (e) => void engine.serverError(e, "release"),
    ended: (run, outcome) => engine.jobEnded(run, outcome),
  });
  const link = new FarmLink(client, {
    rang: (v) => {
      if (!engine.live()) return;
      for (const jobId of v.cancel) jobs.abort(jobId, "cancel");
      claims.rang(v.offers.map((o) => o.jobId as string).filter((id) => !jobs.has(id)), v.resync);
    },
    failed: (e) => void engine.serverError(e, "doorbell"),
    connection: (connected) => engine.emit("connection", { connected }),
    // Back after a drop: an offer to us may have passed on meanwhile and taken us out of the waiting lines.
    reconnected: () => claims.wantFull(),
  });
  const measure = options.measureFacts;
  const presence = new PresenceReporter({
    client,
    clock,
    everyMs: options.presenceEveryMs ?? TIMING.presenceEveryMs,
    // While GPU jobs are held the farm is told this machine has no GPU free, so it offers GPU jobs elsewhere instead
    // of to an engine that would only hand each one straight back.
    measureFacts: measure && (async () => {
      const facts = await measure();
      return holds.gpuHeld ? { ...facts, gpus: [] } : facts;
    }),
    live: () => engine.live(),
    failed: (e, what) => void engine.serverError(e, what),
  });
  return { claims, holds, jobs, link, presence, slots };
}
