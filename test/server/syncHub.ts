// The server side of the Convex sync protocol: routes client messages through the single call queue,
// answers mutations and actions, and keeps every subscribed query current the way a deployment does: after a
// commit it re-runs only the subscribed queries whose read set the commit's writes fall into (identical
// queries share one run and one cached result, see queryCache.ts) and pushes only the results that changed.
import type { JSONValue } from "convex/values";
import type { RawData } from "ws";
import type { CallQueue } from "./callQueue";
import { Connection, type Session } from "./connection";
import { canonicalPath, type FunctionRunner, type Outcome } from "./functions";
import type { Commit } from "./instruments/conflictAudit";
import { Origin } from "./instruments/executions";
import type { Instruments } from "./instruments/instruments";
import type { ReadSet } from "./instruments/readSet";
import type { WriteRecord } from "./instruments/writes";
import { encodeTs, parseClientMessage, type ActionResponse, type AddQuery, type ClientMessage, type MutationResponse, type RemoveQuery, type StateModification } from "./protocol";
import { QueryCache, type CachedQuery } from "./queryCache";

const repliesKeptPerSession = 5_000;
const sessionForgottenAfterMs = 10 * 60_000;

export class SyncHub {
  readonly connections = new Set<Connection>();
  private readonly sessions = new Map<string, Session>();
  private readonly cache = new QueryCache();
  private ts: bigint = BigInt(Date.now()) * 1_000_000n;
  /** Data may have changed since subscriptions were last brought up to date. */
  private dirty = false;
  private refreshQueued = false;
  /** Writes committed since then, by any caller (scheduled functions commit outside the queue). */
  private pendingWrites: WriteRecord[] = [];
  /** The newest commit the subscriptions' results reflect. */
  private coveredSeq = 0;
  private refreshAfterBurst = false;

  constructor(
    private readonly runner: FunctionRunner,
    private readonly queue: CallQueue,
    private readonly instruments: Instruments,
  ) {
    instruments.onCommit((commit) => this.committed(commit));
  }

  private committed(commit: Commit): void {
    for (const write of commit.writes) this.pendingWrites.push(write);
    this.dirty = true;
    // Scheduled functions due together all run in one turn of the event loop: one refresh after the burst.
    if (this.refreshAfterBurst) return;
    this.refreshAfterBurst = true;
    setImmediate(() => {
      this.refreshAfterBurst = false;
      if (this.dirty) this.markDirty();
    });
  }

  /** A new commit timestamp: nanoseconds of wall time, strictly increasing. */
  private nextTs(): bigint {
    const now = BigInt(Date.now()) * 1_000_000n;
    this.ts = now > this.ts ? now : this.ts + 1n;
    return this.ts;
  }

  attach(connection: Connection): void {
    this.connections.add(connection);
    connection.socket.on("message", (data) => this.receive(connection, messageText(data)));
    connection.socket.on("close", () => this.detach(connection));
    connection.socket.on("error", () => this.detach(connection));
  }

  private detach(connection: Connection): void {
    connection.dispose();
    this.connections.delete(connection);
    this.releaseQueries(connection);
    if (connection.session?.connection === connection) {
      connection.session.connection = null;
      connection.session.disconnectedAt = Date.now();
    }
  }

  private receive(connection: Connection, frame: string): void {
    let message: ClientMessage;
    try {
      message = parseClientMessage(frame);
    } catch (error) {
      connection.fatal((error as Error).message);
      return;
    }
    if (message.type === "Connect") {
      this.connect(connection, message.sessionId);
      return;
    }
    if (!connection.session) {
      connection.fatal(`Expected Connect as the first message, got ${message.type}`);
      return;
    }
    if (message.type === "Mutation") {
      this.receiveMutation(connection, message);
      return;
    }
    // What the client had seen when it sent the message, not when the queue gets to it.
    const seenSeq = connection.seenSeq;
    void this.queue.run(() => this.handle(connection, message, seenSeq)).catch((error: Error) => {
      connection.fatal(`Test server failed on ${message.type}: ${error.message}`);
    });
  }

  private async handle(connection: Connection, message: ClientMessage, seenSeq: number): Promise<void> {
    switch (message.type) {
      case "ModifyQuerySet":
        return this.modifyQuerySet(connection, message.baseVersion, message.newVersion, message.modifications);
      case "Authenticate":
        // Tokens are accepted and ignored: functions run without an identity.
        if (message.baseVersion !== connection.identityVersion) {
          return connection.fatal(`Invalid identity base version ${message.baseVersion}, expected ${connection.identityVersion}`);
        }
        await this.refreshIfDirty();
        connection.identityVersion = message.baseVersion + 1;
        return connection.sendTransition([], this.ts, this.coveredSeq);
      case "Action":
        return this.action(connection, message.requestId, message.udfPath, message.args, seenSeq);
      case "Connect":
      case "Event":
      case "Mutation":
        return;
    }
  }

  private connect(connection: Connection, sessionId: string): void {
    this.forgetOldSessions();
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { id: sessionId, connection: null, mutationReplies: new Map(), mutationsInFlight: new Set() };
      this.sessions.set(sessionId, session);
    }
    session.connection = connection;
    session.disconnectedAt = undefined;
    connection.session = session;
  }

  private forgetOldSessions(): void {
    const cutoff = Date.now() - sessionForgottenAfterMs;
    for (const [id, session] of this.sessions) {
      if (session.disconnectedAt !== undefined && session.disconnectedAt < cutoff && session.mutationsInFlight.size === 0) {
        this.sessions.delete(id);
      }
    }
  }

  private async modifyQuerySet(
    connection: Connection,
    baseVersion: number,
    newVersion: number,
    modifications: (AddQuery | RemoveQuery)[],
  ): Promise<void> {
    if (baseVersion !== connection.querySetVersion) {
      return connection.fatal(`Invalid query set base version ${baseVersion}, expected ${connection.querySetVersion}`);
    }
    // Other queries of this connection must be current at the timestamp this transition reaches.
    await this.refreshIfDirty();
    const changes: StateModification[] = [];
    for (const modification of modifications) {
      const earlier = connection.queries.get(modification.queryId);
      if (earlier) this.cache.unsubscribe(earlier);
      if (modification.type === "Add") {
        const entry = await this.cachedQuery(modification.udfPath, modification.args);
        connection.queries.set(modification.queryId, this.cache.subscribe(connection, modification.queryId, entry));
        changes.push(queryModification(modification.queryId, entry.outcome));
        this.instruments.stats.push(entry.path);
      } else {
        connection.queries.delete(modification.queryId);
        changes.push({ type: "QueryRemoved", queryId: modification.queryId });
      }
    }
    // The socket may have closed while a query ran: nothing would ever release these subscriptions.
    if (!this.connections.has(connection)) return this.releaseQueries(connection);
    connection.querySetVersion = newVersion;
    connection.sendTransition(changes, this.ts, this.coveredSeq);
  }

  /** The cached result of a subscribed query, or a fresh run when nobody subscribes to it yet. */
  private async cachedQuery(udfPath: string, args: JSONValue[]): Promise<CachedQuery> {
    const path = canonicalPath(udfPath).path;
    const cached = this.cache.get(QueryCache.key(path, args));
    if (cached) return cached;
    const { outcome, reads } = await this.runQuery(udfPath, args);
    return this.cache.get(QueryCache.key(path, args)) ?? this.cache.create(path, udfPath, args, outcome, reads);
  }

  private async runQuery(udfPath: string, args: JSONValue[]): Promise<{ outcome: Outcome; reads: ReadSet | undefined }> {
    const origin = new Origin("subscriptions", this.instruments.seq);
    const outcome = await this.runner.run("query", udfPath, args, origin);
    return { outcome, reads: this.instruments.readsOf(origin) };
  }

  private releaseQueries(connection: Connection): void {
    for (const subscription of connection.queries.values()) this.cache.unsubscribe(subscription);
    connection.queries.clear();
  }

  private receiveMutation(connection: Connection, message: ClientMessage & { type: "Mutation" }): void {
    const session = connection.session!;
    const { requestId } = message;
    if (session.mutationsInFlight.has(requestId)) return;
    const earlierReply = session.mutationReplies.get(requestId);
    if (earlierReply) {
      void this.queue.run(async () => {
        await this.refreshIfDirty();
        connection.send(earlierReply);
        connection.sendTransition([], this.ts, this.coveredSeq);
      });
      return;
    }
    session.mutationsInFlight.add(requestId);
    const seenSeq = connection.seenSeq;
    void this.queue
      .run(() => this.mutation(session, requestId, message.udfPath, message.args, seenSeq))
      .catch((error: Error) => session.connection?.fatal(`Test server failed on a mutation: ${error.message}`))
      .finally(() => session.mutationsInFlight.delete(requestId));
  }

  private async mutation(session: Session, requestId: number, udfPath: string, args: JSONValue[], seenSeq: number): Promise<void> {
    const outcome = await this.runner.run("mutation", udfPath, args, new Origin(`session:${session.id}`, seenSeq));
    const reply: MutationResponse = outcome.ok
      ? { type: "MutationResponse", requestId, success: true, result: outcome.value, ts: encodeTs(this.nextTs()), logLines: [] }
      : { type: "MutationResponse", requestId, success: false, result: outcome.errorMessage, errorData: outcome.errorData, logLines: [] };
    rememberReply(session, requestId, reply);
    // Answer whichever connection the session has now: the client may have reconnected meanwhile.
    const connection = session.connection;
    connection?.send(reply);
    if (!outcome.ok) return;
    if (connection) connection.needsTransition = true;
    this.markDirty();
  }

  private async action(connection: Connection, requestId: number, udfPath: string, args: JSONValue[], seenSeq: number): Promise<void> {
    const outcome = await this.runner.run("action", udfPath, args, new Origin(`session:${connection.session!.id}`, seenSeq));
    const reply: ActionResponse = outcome.ok
      ? { type: "ActionResponse", requestId, success: true, result: outcome.value, logLines: [] }
      : { type: "ActionResponse", requestId, success: false, result: outcome.errorMessage, errorData: outcome.errorData, logLines: [] };
    // Its mutations' commits have queued the refresh already.
    (connection.session?.connection ?? connection).send(reply);
  }

  /**
   * Queues one refresh behind the calls already waiting, so a burst of mutations from many clients is
   * followed by a single re-run of the subscriptions instead of one per mutation.
   */
  markDirty(): void {
    this.dirty = true;
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    void this.queue.run(async () => {
      this.refreshQueued = false;
      await this.refreshIfDirty();
    });
  }

  private async refreshIfDirty(): Promise<void> {
    if (this.dirty) await this.refreshSubscriptions();
  }

  /**
   * Re-runs each subscribed query a write committed since the last refresh falls into (once, however many
   * subscribe to it), pushes the changed results, and acknowledges pending mutation timestamps. Must run
   * inside the call queue.
   */
  async refreshSubscriptions(): Promise<void> {
    this.dirty = false;
    const ts = this.nextTs();
    const writes = this.pendingWrites;
    this.pendingWrites = [];
    this.coveredSeq = this.instruments.seq;
    const rerun: CachedQuery[] = [];
    for (const entry of this.cache.stale(writes)) {
      // Its last subscriber may have gone while an earlier query of this refresh ran.
      if (entry.subscribers.size === 0) continue;
      const { outcome, reads } = await this.runQuery(entry.udfPath, entry.args);
      this.cache.update(entry, outcome, reads);
      rerun.push(entry);
    }
    const changes = new Map<Connection, StateModification[]>();
    for (const entry of rerun) {
      for (const subscription of entry.subscribers) {
        const { connection } = subscription;
        if (subscription.lastResult === entry.serialized || !connection.open || !connection.session) continue;
        subscription.lastResult = entry.serialized;
        const modifications = changes.get(connection) ?? [];
        modifications.push(queryModification(subscription.queryId, entry.outcome));
        changes.set(connection, modifications);
        this.instruments.stats.push(entry.path);
      }
    }
    for (const connection of this.connections) {
      if (!connection.open || !connection.session) continue;
      const modifications = changes.get(connection);
      if (modifications || connection.needsTransition) connection.sendTransition(modifications ?? [], ts, this.coveredSeq);
    }
  }

  /** Runs a read-only call from outside the sync protocol through the queue. */
  call<T>(call: () => Promise<T>): Promise<T> {
    return this.queue.run(call);
  }

  /** Runs a function from outside the sync protocol (HTTP, seeding), through the queue, then refreshes. */
  callAndRefresh<T>(call: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      try {
        return await call();
      } finally {
        await this.refreshSubscriptions();
      }
    });
  }

  closeAll(code: number, reason: string): void {
    for (const connection of this.connections) connection.socket.close(code, reason);
  }
}

function queryModification(queryId: number, outcome: Outcome): StateModification {
  return outcome.ok
    ? { type: "QueryUpdated", queryId, value: outcome.value, logLines: [], journal: null }
    : { type: "QueryFailed", queryId, errorMessage: outcome.errorMessage, errorData: outcome.errorData, logLines: [], journal: null };
}

function rememberReply(session: Session, requestId: number, reply: object): void {
  session.mutationReplies.set(requestId, reply);
  if (session.mutationReplies.size > repliesKeptPerSession) {
    const oldest = session.mutationReplies.keys().next().value as number;
    session.mutationReplies.delete(oldest);
  }
}

/** A WebSocket message's text, however ws delivered its bytes. */
function messageText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8");
}
