// The instruments of one test server: they see every function execution and its database operations (see
// executions.ts, syscallRecorder.ts), count calls, conflicts and pushes (stats.ts), keep each transaction's
// read and write sets, audit mutations for would-be OCC conflicts (conflictAudit.ts) and announce every
// commit that wrote something, so the sync hub re-runs only the subscriptions it touched.
import { AsyncLocalStorage } from "node:async_hooks";
import { jsonToConvex, type JSONValue, type Value } from "convex/values";
import { ConflictAudit, type Commit } from "./conflictAudit";
import { Execution, frames, Origin, Transaction, type ExecutionKind, type Frame } from "./executions";
import type { IndexCatalog, Projection } from "./indexCatalog";
import { recordOperation } from "./dbOperations";
import type { ReadSet } from "./readSet";
import { StatsCounter } from "./stats";
import { ensureSyscallRecorder, unrecordedAsyncSyscall } from "./syscallRecorder";
import { unknownVersion, type Version, type WriteRecord } from "./writes";

export type InstrumentsOptions = {
  catalog: IndexCatalog;
  conflictWindowMs: number;
  /** convex-test enforces transaction limits: the instruments' own reads must stay inside them. */
  limitsEnforced: boolean;
};

export type ExecutionSpec = {
  /** "module:name", "http:POST /api/jobs", or "inline" for code a test hands to convex-test. */
  path: string;
  kind: ExecutionKind;
  /** Whether the execution is a function call for the stats and the audit (inline test code is not). */
  counted: boolean;
};

const MiB = 1 << 20;

export class Instruments {
  readonly stats: StatsCounter;
  private readonly audit: ConflictAudit;
  /** The committed version of every document instrumented transactions wrote (index fields only). */
  private readonly committed = new Map<string, Projection>();
  private readonly listeners = new Set<(commit: Commit) => void>();
  /** Number of the newest commit that wrote something. */
  private newestSeq = 0;
  private callers = 0;
  private closed = false;
  private warned = false;
  /**
   * Runs code in the async context the server was started in. Listeners must not run in the committing
   * function's context: work they queue would inherit convex-test's transaction state.
   */
  private readonly outside = AsyncLocalStorage.snapshot();

  constructor(private readonly options: InstrumentsOptions) {
    this.stats = new StatsCounter(options.conflictWindowMs);
    this.audit = new ConflictAudit(options.conflictWindowMs);
  }

  get seq(): number {
    return this.newestSeq;
  }

  /** A caller name no other origin has: "http#4", "cron:sweep#2". */
  uniqueCaller(prefix: string): string {
    return `${prefix}#${++this.callers}`;
  }

  /** Calls `listener` after every commit that wrote something; returns the unsubscribe function. */
  onCommit(listener: (commit: Commit) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `body` (which calls into convex-test) on behalf of `origin`. */
  within<T>(origin: Origin, body: () => T): T {
    ensureSyscallRecorder();
    return frames.run({ instruments: this, origin }, body);
  }

  /** The read set of the query or mutation run first for `origin`; undefined when none ran. */
  readsOf(origin: Origin): ReadSet | undefined {
    return origin.root?.tx?.reads;
  }

  /** Runs one function execution: a handler of the app's modules, an HTTP action, or inline test code. */
  runExecution<T>(spec: ExecutionSpec, body: () => Promise<T>): Promise<T> {
    ensureSyscallRecorder();
    const frame = frames.getStore();
    const mine = frame?.instruments === this ? frame : undefined;
    // Called with no frame of this server: a test calling convex-test directly (server.t).
    const origin = mine?.origin ?? new Origin("direct", this.newestSeq, false);
    const parent = mine?.execution?.running ? mine.execution : undefined;
    const transactional = spec.kind === "query" || spec.kind === "mutation";
    const nested = transactional && parent?.tx !== undefined;
    const tx = nested ? parent.tx : transactional ? new Transaction(spec.kind as "query" | "mutation", this.options.catalog) : undefined;
    const execution = new Execution(origin, spec.path, spec.kind, parent, tx);
    origin.root ??= execution;
    if (spec.counted && origin.counted) this.stats.call(spec.path);
    return frames.run({ instruments: this, origin, execution }, async () => {
      try {
        const result = await body();
        if (nested) parent.adopt(execution);
        else if (tx?.kind === "mutation") await this.commit(execution, spec.counted);
        return result;
      } finally {
        execution.running = false;
      }
    });
  }

  /** Called by the syscall recorder with each answered database operation. */
  observe(execution: Execution, op: string, argsJson: string, resultJson: string): void {
    try {
      recordOperation(execution, op, argsJson, resultJson, (id) => this.committed.get(id) ?? unknownVersion);
    } catch (error) {
      if (execution.tx) execution.tx.reads.volatile = true;
      this.warn(`could not record ${op}: ${(error as Error).message}`);
    }
  }

  /** The origin a function scheduled now runs under (see syscallRecorder). */
  scheduledOrigin(): Origin {
    return new Origin("scheduled", this.newestSeq);
  }

  /** The scheduling call answered with the scheduled job's id. */
  scheduled(frame: Frame, launch: Origin, resultJson: string): void {
    launch.caller = `scheduled:${JSON.parse(resultJson) as string}`;
    const tx = frame.execution?.running ? frame.execution.tx : undefined;
    // Scheduled from a mutation: it runs after that mutation commits and sees its writes.
    if (tx?.kind === "mutation") tx.scheduled.push(launch);
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
  }

  /** The mutation's handler returned: convex-test commits its transaction next. */
  private async commit(execution: Execution, audited: boolean): Promise<void> {
    try {
      const tx = execution.tx!;
      const writes = await this.finalVersions(execution);
      const at = performance.now();
      const { origin } = execution;
      if (audited && origin.counted) {
        const mutation = { startedAt: tx.startedAt, caller: origin.caller, seenSeq: origin.seenSeq, reads: tx.reads };
        if (this.audit.wouldConflict(mutation)) this.stats.conflict(execution.path);
      }
      if (writes.length > 0) {
        const commit: Commit = { seq: ++this.newestSeq, at, caller: origin.caller, writes };
        this.audit.record(commit);
        for (const write of writes) {
          if (write.after === null || write.after === unknownVersion) this.committed.delete(write.id);
          else this.committed.set(write.id, write.after);
        }
        if (!this.closed) this.outside(() => this.listeners.forEach((listener) => listener(commit)));
      }
      for (const launch of tx.scheduled) launch.seenSeq = this.newestSeq;
    } catch (error) {
      this.warn(`could not record a commit of ${execution.path}: ${(error as Error).message}`);
    }
  }

  /** Reads back every written document as the transaction leaves it. */
  private async finalVersions(execution: Execution): Promise<WriteRecord[]> {
    if (execution.writes.size === 0) return [];
    const readable = await this.mayRead(execution.writes.size);
    const records: WriteRecord[] = [];
    for (const [id, { table, before }] of execution.writes) {
      records.push({ table, id, before, after: readable ? await this.currentVersion(table, id) : unknownVersion });
    }
    return records;
  }

  /**
   * The read-backs count against the transaction's read limits after the function has finished, so they can
   * only make it fail by exceeding a limit: they are skipped when the limits left are too close.
   */
  private async mayRead(documents: number): Promise<boolean> {
    if (!this.options.limitsEnforced) return true;
    try {
      const metrics = JSON.parse(await unrecordedAsyncSyscall("1.0/getTransactionMetrics", "{}")) as Record<string, { used: number; remaining: number }>;
      return (
        metrics.databaseQueries.remaining > documents &&
        metrics.documentsRead.remaining > documents &&
        metrics.bytesRead.remaining > 2 * metrics.bytesWritten.used + MiB
      );
    } catch {
      return false;
    }
  }

  private async currentVersion(table: string, id: string): Promise<Version> {
    try {
      const document = jsonToConvex(JSON.parse(await unrecordedAsyncSyscall("1.0/get", JSON.stringify({ table, id }))) as JSONValue);
      return document === null ? null : this.options.catalog.project(table, document as Record<string, Value>);
    } catch {
      return unknownVersion;
    }
  }

  private warn(message: string): void {
    if (this.warned) return;
    this.warned = true;
    console.error(`Test server instruments: ${message} (later problems are not reported)`);
  }
}
