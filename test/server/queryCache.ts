// Subscribed query results, shared by every subscription to the same (query, arguments) as a deployment's
// query cache shares them: one run serves all subscribers, and a result stays current until a committed
// write falls into the read set of the run that produced it.
import type { JSONValue } from "convex/values";
import type { Connection } from "./connection";
import type { Outcome } from "./functions";
import type { ReadSet } from "./instruments/readSet";
import type { WriteRecord } from "./instruments/writes";
import type { QueryId } from "./protocol";

export type CachedQuery = {
  key: string;
  /** "module:name", the stats key. */
  path: string;
  udfPath: string;
  args: JSONValue[];
  outcome: Outcome;
  serialized: string;
  /** Undefined when the query never reached its handler (bad arguments): nothing can change its answer. */
  reads: ReadSet | undefined;
  subscribers: Set<Subscription>;
};

export type Subscription = { queryId: QueryId; connection: Connection; entry: CachedQuery; lastResult: string };

export class QueryCache {
  private readonly entries = new Map<string, CachedQuery>();

  static key(path: string, args: JSONValue[]): string {
    return JSON.stringify([path, args]);
  }

  get(key: string): CachedQuery | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** A fresh result for a query nobody subscribes to yet; it stays cached while someone does. */
  create(path: string, udfPath: string, args: JSONValue[], outcome: Outcome, reads: ReadSet | undefined): CachedQuery {
    const key = QueryCache.key(path, args);
    const entry: CachedQuery = { key, path, udfPath, args, outcome, serialized: JSON.stringify(outcome), reads, subscribers: new Set() };
    this.entries.set(key, entry);
    return entry;
  }

  update(entry: CachedQuery, outcome: Outcome, reads: ReadSet | undefined): void {
    entry.outcome = outcome;
    entry.serialized = JSON.stringify(outcome);
    entry.reads = reads;
  }

  subscribe(connection: Connection, queryId: QueryId, entry: CachedQuery): Subscription {
    const subscription: Subscription = { queryId, connection, entry, lastResult: entry.serialized };
    entry.subscribers.add(subscription);
    return subscription;
  }

  unsubscribe(subscription: Subscription): void {
    const { entry } = subscription;
    entry.subscribers.delete(subscription);
    if (entry.subscribers.size === 0 && this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  /** Results a committed write may have changed; those that read a system table are always suspect. */
  stale(writes: readonly WriteRecord[]): CachedQuery[] {
    const stale: CachedQuery[] = [];
    for (const entry of this.entries.values()) {
      const reads = entry.reads;
      if (reads && (reads.volatile || writes.some((write) => reads.touches(write)))) stale.push(entry);
    }
    return stale;
  }
}
