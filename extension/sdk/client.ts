// farmhand/client: the submitter's SDK. Submit jobs, follow them live (a Convex subscription, never polling),
// wait for their results, map a job type over many payloads. Argument and result types are those of the
// server's own functions (convex/_generated/api), so a server change breaks a caller's build, not its run.
// Runs on Node 20 and in browsers (ESM); no Node API is used here.
import { ConvexClient } from "convex/browser";
import type { FunctionArgs, FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import { valueBytes, LIMITS } from "../../convex/contract";
import { JobFailedError, failureOf, isFinal } from "./outcome";
import { FarmhandSchedules } from "./schedules";
import { typed, type Transport, type TypedTransport } from "./transport";

export type { Transport } from "./transport";

export { JobFailedError } from "./outcome";
export { FarmhandSchedules, type ScheduleCreated, type ScheduleSpec, type ScheduleView } from "./schedules";

type Jobs = typeof api.jobs;
/** One job as jobs:submit takes it (without the key): type, payload, priority, batchId, dependsOn, … */
export type JobSpec = Omit<FunctionArgs<Jobs["submit"]>, "clientKey">;
export type JobId = FunctionReturnType<Jobs["submit"]>;
/** What jobs:get answers for a job: status, progress, result, error, errorCode, output, … */
export type JobView = NonNullable<FunctionReturnType<Jobs["get"]>>;
export type BatchStatus = FunctionReturnType<Jobs["batchStatus"]>;
export type CancelResult = FunctionReturnType<Jobs["cancel"]>;
/** A job's end as results() yields it: its result, or the JobFailedError it ended with. */
export type JobOutcome = { jobId: string; status: "succeeded"; result: unknown } | { jobId: string; status: "dead" | "canceled"; error: JobFailedError };


/** `log: false` keeps the Convex client from also writing failed calls to the console (they reject either way). */
export type FarmhandClientOptions = { url: string; clientKey: string; log?: boolean } | { client: Transport; clientKey: string };
/**
 * submitMany's options. `seal` (with `batchId`): the batch is sealed by the last chunk, and its children wait for the
 * seal, so a child submitted meanwhile cannot start with only the first chunks' results.
 */
export type SubmitManyOptions = { batchId?: string; seal?: boolean; onProgress?: (submitted: number, total: number) => void };
export type ResultOptions = { signal?: AbortSignal; timeoutMs?: number };
/**
 * map's options: `spec` is added to every job (priority, batchId, requirements…); about `window` jobs (default 256;
 * at most 1.5 × window) are submitted and not yet yielded at any time, so memory stays bounded whatever the input's length.
 */
export type MapOptions = { spec?: Omit<JobSpec, "type" | "payload">; window?: number; signal?: AbortSignal };

export class FarmhandClient {
  private readonly client: TypedTransport;
  private readonly clientKey: string;
  private readonly owned: boolean;
  /** Schedules: create, list, pause, resume, remove (by name). */
  readonly schedules: FarmhandSchedules;

  constructor(options: FarmhandClientOptions) {
    if (!options || typeof options.clientKey !== "string" || !options.clientKey) throw new TypeError("FarmhandClient needs a clientKey (fh_c_…)");
    this.clientKey = options.clientKey;
    if ("client" in options) {
      this.client = typed(options.client);
      this.owned = false;
    } else {
      if (typeof options.url !== "string" || !/^https?:\/\//.test(options.url)) throw new TypeError("FarmhandClient needs the deployment's url (https://…convex.cloud)");
      // any deployment URL (a self-hosted or loopback one too); no "unsaved changes" prompt in a browser tab
      this.client = new ConvexClient(options.url, { skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false, ...(options.log === false ? { logger: false } : {}) });
      this.owned = true;
    }
    this.schedules = new FarmhandSchedules(this.client, this.clientKey);
  }

  /**
   * Submit one job; resolves with its id. With `externalId` (an idempotency key of this client key) a repeat answers
   * with the first job's id; the same key with a different spec rejects with `idempotency_mismatch`.
   */
  async submit(spec: JobSpec): Promise<JobId> {
    return await this.client.mutation(api.jobs.submit, { ...spec, clientKey: this.clientKey });
  }

  /**
   * Submit many jobs in chunks under the batch caps (jobs per call and payload bytes per call); resolves with
   * their ids in order. Each chunk is all or nothing; a refused chunk rejects, after the chunks before it landed.
   */
  async submitMany(specs: readonly JobSpec[], options: SubmitManyOptions = {}): Promise<JobId[]> {
    const { batchId, seal } = options;
    if (seal && batchId === undefined) throw new RangeError("submitMany: seal needs a batchId");
    const ids: JobId[] = [];
    const chunks = [...chunksOf(specs, batchId)];
    for (const [i, chunk] of chunks.entries()) {
      const sealing = seal ? { seal: i === chunks.length - 1 } : {};
      ids.push(...(await this.client.mutation(api.jobs.submitBatch, { clientKey: this.clientKey, jobs: chunk, ...sealing })));
      options.onProgress?.(ids.length, specs.length);
    }
    if (seal && chunks.length === 0) await this.client.mutation(api.jobs.sealBatch, { clientKey: this.clientKey, batchId: batchId! });
    return ids;
  }

  /**
   * The job's result once it has succeeded, followed live; rejects with JobFailedError if it ends dead or
   * canceled (or is unknown), with an AbortError-like reason on `signal`, or a timeout error after `timeoutMs`.
   */
  result(jobId: string, options: ResultOptions = {}): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        queueMicrotask(() => unsubscribe());
        settle();
      };
      const onAbort = () => finish(() => reject(abortError(options.signal!)));
      const unsubscribe = this.watchJob(jobId, (job) => {
        if (job === null) return finish(() => reject(new JobFailedError({ jobId, status: "unknown", code: "not_found", message: "No such job" })));
        if (!isFinal(job.status)) return;
        if (job.status === "succeeded") finish(() => resolve(job.result));
        else finish(() => reject(failureOf(job)));
      }, (error) => finish(() => reject(error)));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener("abort", onAbort);
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => finish(() => reject(new Error(`job ${jobId} did not end within ${options.timeoutMs} ms`))), options.timeoutMs);
      }
    });
  }

  /** The jobs' ends, in the order they end (each job followed live; at most `window` at a time). */
  async *results(jobIds: readonly string[], options: { window?: number } = {}): AsyncIterable<JobOutcome> {
    const window = windowOf(options.window);
    const ended: JobOutcome[] = [];
    let wake: (() => void) | undefined;
    let next = 0;
    let open = 0;
    const follow = (jobId: string) => {
      open++;
      this.result(jobId).then(
        (result) => ended.push({ jobId, status: "succeeded", result }),
        (error: unknown) => ended.push({ jobId, status: error instanceof JobFailedError && error.status === "canceled" ? "canceled" : "dead", error: asFailure(jobId, error) }),
      ).finally(() => {
        open--;
        wake?.();
      });
    };
    while (next < jobIds.length || open > 0 || ended.length > 0) {
      while (open < window && next < jobIds.length) follow(jobIds[next++]);
      if (ended.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      for (let outcome = ended.shift(); outcome; outcome = ended.shift()) yield outcome;
    }
  }

  /**
   * Run `type` over every payload: submits in chunks of window/2, yields each result in input order, keeps at most
   * 1.5 × `window` jobs submitted and not yet yielded. Throws JobFailedError at the first job that failed (in order).
   */
  async *map(type: string, payloads: Iterable<unknown> | AsyncIterable<unknown>, options: MapOptions = {}): AsyncIterable<unknown> {
    const window = windowOf(options.window);
    const chunk = Math.max(1, Math.min(LIMITS.batchCount, Math.ceil(window / 2)));
    const inFlight: Array<Promise<unknown>> = [];
    let pending: JobSpec[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      const specs = pending;
      pending = [];
      for (const id of await this.submitMany(specs)) {
        const result = this.result(id, { signal: options.signal });
        result.catch(() => undefined); // observed when its turn comes
        inFlight.push(result);
      }
    };
    for await (const payload of payloads) {
      pending.push({ ...options.spec, type, payload });
      if (pending.length >= chunk) await flush();
      while (inFlight.length >= window) yield await inFlight.shift()!;
    }
    await flush();
    while (inFlight.length > 0) yield await inFlight.shift()!;
  }

  /** Cancel a job: a waiting or pending one ends at once, a running one is asked to stop. */
  async cancel(jobId: string): Promise<CancelResult> {
    return await this.client.mutation(api.jobs.cancel, { clientKey: this.clientKey, jobId });
  }

  /** Follow a batch's counts live; returns a function that stops. */
  watchBatch(batchId: string, onChange: (status: BatchStatus) => void, onError?: (error: Error) => void): () => void {
    const unsubscribe = this.client.onUpdate(api.jobs.batchStatus, { clientKey: this.clientKey, batchId }, onChange, onError);
    return () => unsubscribe();
  }

  /** Follow one job live (null when there is no such job in this org); returns a function that stops. */
  watchJob(jobId: string, onChange: (job: JobView | null) => void, onError?: (error: Error) => void): () => void {
    const unsubscribe = this.client.onUpdate(api.jobs.get, { clientKey: this.clientKey, jobId }, onChange, onError);
    return () => unsubscribe();
  }

  /** The ids of a batch's jobs (newest first), a page at a time. */
  async *batchJobIds(batchId: string): AsyncIterable<string> {
    let cursor: string | null = null;
    do {
      const page: FunctionReturnType<Jobs["list"]> = await this.client.query(api.jobs.list, { clientKey: this.clientKey, batchId, cursor, limit: 25 });
      for (const job of page.jobs) yield job.jobId;
      cursor = page.cursor;
    } while (cursor !== null);
  }

  /** A job as it is now. */
  async get(jobId: string): Promise<JobView | null> {
    return await this.client.query(api.jobs.get, { clientKey: this.clientKey, jobId });
  }

  /** Close the connection this client opened (a client handed in is left open). */
  async close(): Promise<void> {
    if (this.owned) await this.client.close();
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("aborted");
}

function windowOf(window: number | undefined): number {
  const w = window ?? 256;
  if (!Number.isInteger(w) || w < 1 || w > 10_000) throw new RangeError(`window must be a whole number from 1 to 10000, got ${w}`);
  return w;
}

function asFailure(jobId: string, error: unknown): JobFailedError {
  if (error instanceof JobFailedError) return error;
  return new JobFailedError({ jobId, status: "unknown", code: "error", message: error instanceof Error ? error.message : String(error) });
}

/** Chunks under jobs:submitBatch's caps: at most LIMITS.batchCount jobs and LIMITS.batchPayloadBytes of payloads. */
export function* chunksOf(specs: readonly JobSpec[], batchId?: string): Generator<JobSpec[]> {
  let chunk: JobSpec[] = [];
  let bytes = 0;
  for (const spec of specs) {
    const size = valueBytes(spec.payload ?? null);
    if (chunk.length > 0 && (chunk.length >= LIMITS.batchCount || bytes + size > LIMITS.batchPayloadBytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(batchId !== undefined && spec.batchId === undefined ? { ...spec, batchId } : spec);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
