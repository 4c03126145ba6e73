// The read set of one transaction, built from its database syscalls: index ranges with the part each read
// actually covered, documents read by id, and whole tables. `touches` says whether a committed write falls
// into it — what decides a subscription re-run and a would-be OCC conflict.
import { jsonToConvex, type JSONValue, type Value } from "convex/values";
import { keyOf, type IndexCatalog, type Projection } from "./indexCatalog";
import { containsKey, rangeAfter, rangeFromExpressions, rangeThrough, type KeyRange, type Order, type RangeExpression } from "./keyRange";
import type { IndexKey } from "./valueOrder";
import { isSystemTable, tableOfId, unknownVersion, type Version, type WriteRecord } from "./writes";

/** A query as it travels in the `1.0/queryStream` and `1.0/queryPage` syscalls. */
export type SyscallQuery = {
  source:
    | { type: "FullTableScan"; tableName: string; order?: Order | null }
    | { type: "IndexRange"; indexName: string; range: RangeExpression[]; order?: Order | null }
    | { type: "Search"; indexName: string };
  operators: Array<{ filter?: unknown; limit?: number }>;
};

type Coverage = KeyRange | "table" | undefined;

interface RangeRead {
  readonly table: string;
  readonly keyFields?: readonly string[];
  /** The key range read so far; "table" for all of it; undefined when nothing was read. */
  covered(): Coverage;
}

/** A query iterated one document at a time (`.collect()`, `.first()`, `.take(k)`, `for await`). */
class StreamRead implements RangeRead {
  private count = 0;
  private done = false;
  private lastDocument?: string;
  private coverage?: Coverage;

  constructor(
    readonly table: string,
    readonly keyFields: readonly string[],
    private readonly range: KeyRange,
    private readonly order: Order,
    private readonly limit: number | undefined,
  ) {}

  /** `raw` is the syscall's answer, `{"value":…,"done":…}`; the document is parsed only when needed. */
  next(raw: string): void {
    const done = raw.endsWith('"done":true}') || (!raw.endsWith('"done":false}') && (JSON.parse(raw) as { done: boolean }).done);
    if (done) this.done = true;
    else {
      this.count++;
      this.lastDocument = raw;
    }
    this.coverage = undefined;
  }

  covered(): Coverage {
    if (this.coverage !== undefined) return this.coverage;
    // A limit ends the stream after `limit` documents although more may follow in the range.
    if (this.done && (this.limit === undefined || this.count < this.limit)) this.coverage = this.range;
    else if (this.count > 0) {
      const document = jsonToConvex((JSON.parse(this.lastDocument!) as { value: JSONValue }).value) as Record<string, Value>;
      this.coverage = rangeThrough(this.range, keyOf(document, this.keyFields), this.order);
    }
    return this.coverage;
  }
}

class FixedRead implements RangeRead {
  constructor(
    readonly table: string,
    readonly keyFields: readonly string[] | undefined,
    private readonly coverage: Coverage,
  ) {}

  covered(): Coverage {
    return this.coverage;
  }
}

/** Pagination cursors are JSON arrays of the key fields, each itself Convex JSON text (null: missing). */
function decodeCursor(cursor: string): IndexKey {
  return (JSON.parse(cursor) as Array<string | null>).map((field) => (field === null ? undefined : jsonToConvex(JSON.parse(field) as JSONValue)));
}

const realCursor = (cursor: unknown): cursor is string => typeof cursor === "string" && cursor !== "_end_cursor";

/**
 * A refresh checks each written version against every cached query's ranges of the same index: its key in
 * that index is computed once (the catalog hands out one key-fields array per index).
 */
const keysOfVersions = new WeakMap<object, Map<readonly string[], IndexKey>>();
function versionKey(version: Projection, keyFields: readonly string[]): IndexKey {
  let keys = keysOfVersions.get(version);
  if (!keys) keysOfVersions.set(version, (keys = new Map<readonly string[], IndexKey>()));
  let key = keys.get(keyFields);
  if (!key) keys.set(keyFields, (key = keyOf(version, keyFields)));
  return key;
}

export class ReadSet {
  private readonly streams = new Map<number, StreamRead>();
  private readonly byTable = new Map<string, RangeRead[]>();
  private readonly ids = new Set<string>();
  /** A system table was read: its changes happen without syscalls, so no write can be matched against it. */
  volatile = false;

  constructor(private readonly catalog: IndexCatalog) {}

  private add(read: RangeRead): void {
    const reads = this.byTable.get(read.table);
    if (reads) reads.push(read);
    else this.byTable.set(read.table, [read]);
  }

  /** Table, key fields, range and order of a query; undefined for a system table. */
  private describe(query: SyscallQuery): { table: string; keyFields?: string[]; range: KeyRange; order: Order } | undefined {
    const source = query.source;
    let table: string;
    let index: string;
    let range: KeyRange = {};
    if (source.type === "FullTableScan") {
      table = source.tableName;
      index = "by_creation_time";
    } else {
      const dot = source.indexName.indexOf(".");
      table = source.indexName.slice(0, dot);
      index = source.indexName.slice(dot + 1);
      if (source.type === "IndexRange") range = rangeFromExpressions(source.range);
      else index = ""; // a search index: any write to the table may change the answer
    }
    if (isSystemTable(table)) {
      this.volatile = true;
      return undefined;
    }
    const order = "order" in source && source.order === "desc" ? "desc" : "asc";
    return { table, keyFields: this.catalog.keyFields(table, index), range, order };
  }

  startStream(queryId: number, query: SyscallQuery): void {
    const described = this.describe(query);
    if (!described) return;
    const { table, keyFields, range, order } = described;
    if (!keyFields) return this.wholeTable(table);
    const limit = query.operators.find((operator) => operator.limit !== undefined)?.limit;
    const read = new StreamRead(table, keyFields, range, order, limit);
    this.streams.set(queryId, read);
    this.add(read);
  }

  streamNext(queryId: number, raw: string): void {
    this.streams.get(queryId)?.next(raw);
  }

  /** One `.paginate()` page: from after its cursor to its continue cursor (or the range's end). */
  page(args: { query: SyscallQuery; cursor?: unknown; endCursor?: unknown }, result: { continueCursor?: unknown }): void {
    const described = this.describe(args.query);
    // A page asked for after the end cursor reads nothing.
    if (!described || args.cursor === "_end_cursor") return;
    const { table, keyFields, order } = described;
    if (!keyFields) return this.wholeTable(table);
    let range = described.range;
    if (realCursor(args.cursor)) range = rangeAfter(range, decodeCursor(args.cursor), order);
    const end = realCursor(result.continueCursor) ? result.continueCursor : realCursor(args.endCursor) ? args.endCursor : undefined;
    if (end !== undefined) range = rangeThrough(range, decodeCursor(end), order);
    this.add(new FixedRead(table, keyFields, range));
  }

  /** `db.get(id)`, whether or not the document exists. */
  point(id: string, table = tableOfId(id)): void {
    if (table !== undefined && isSystemTable(table)) this.volatile = true;
    else this.ids.add(id);
  }

  /** A read whose answer any write to the table may change (a count, a search). */
  wholeTable(table: string): void {
    if (isSystemTable(table)) this.volatile = true;
    else this.add(new FixedRead(table, undefined, "table"));
  }

  get empty(): boolean {
    return this.ids.size === 0 && this.byTable.size === 0 && !this.volatile;
  }

  touches(write: WriteRecord): boolean {
    if (this.ids.has(write.id)) return true;
    const reads = this.byTable.get(write.table);
    if (!reads) return false;
    for (const read of reads) {
      const coverage = read.covered();
      if (coverage === undefined) continue;
      if (coverage === "table") return true;
      if (this.versionIn(write.before, coverage, read.keyFields!) || this.versionIn(write.after, coverage, read.keyFields!)) return true;
    }
    return false;
  }

  private versionIn(version: Version, range: KeyRange, keyFields: readonly string[]): boolean {
    if (version === null) return false;
    if (version === unknownVersion) return true;
    return containsKey(range, versionKey(version, keyFields));
  }
}
