// Who is running what: every function execution the server starts runs inside a frame (an AsyncLocalStorage
// value) naming its origin (the caller), the execution and, for queries and mutations, the transaction the
// database syscalls of that execution belong to.
import { AsyncLocalStorage } from "node:async_hooks";
import type { IndexCatalog } from "./indexCatalog";
import type { Instruments } from "./instruments";
import { ReadSet } from "./readSet";
import type { Version } from "./writes";

/**
 * The caller of one or more executions. `caller` tells callers apart for the conflict audit ("session:<id>",
 * "scheduled:<jobId>", "http#3", "cron:<name>#2", "test", "direct"); `seenSeq` is the newest commit the caller
 * had seen when it made the call; only counted origins add to the stats.
 */
export class Origin {
  /** The first execution started for this origin: the function the server was asked to run. */
  root?: Execution;

  constructor(
    public caller: string,
    public seenSeq: number,
    readonly counted = true,
  ) {}
}

export type ExecutionKind = "query" | "mutation" | "action" | "http";

export class Transaction {
  readonly reads: ReadSet;
  readonly startedAt = performance.now();
  /** Functions this transaction scheduled: they have seen everything it committed. */
  readonly scheduled: Origin[] = [];

  constructor(
    readonly kind: "query" | "mutation",
    catalog: IndexCatalog,
  ) {
    this.reads = new ReadSet(catalog);
  }
}

export type PendingWrite = { table: string; before: Version };

export class Execution {
  running = true;
  /** Documents this execution wrote, with their committed version from before the transaction. */
  readonly writes = new Map<string, PendingWrite>();

  constructor(
    readonly origin: Origin,
    readonly path: string,
    readonly kind: ExecutionKind,
    readonly parent: Execution | undefined,
    /** Shared with the parent when nested in its transaction (ctx.runQuery/runMutation inside a mutation). */
    readonly tx: Transaction | undefined,
  ) {}

  /** The version before the transaction, when this transaction already wrote the document. */
  earlierWrite(id: string): PendingWrite | undefined {
    const write = this.writes.get(id);
    if (write) return write;
    return this.parent && this.parent.tx === this.tx ? this.parent.earlierWrite(id) : undefined;
  }

  /** A nested mutation committed into its parent's transaction. */
  adopt(child: Execution): void {
    for (const [id, write] of child.writes) if (!this.writes.has(id)) this.writes.set(id, write);
  }
}

export type Frame = { instruments: Instruments; origin: Origin; execution?: Execution };

export const frames = new AsyncLocalStorage<Frame>();
