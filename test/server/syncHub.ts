// The server side of the Convex sync protocol: routes client messages through the single call queue,
// answers mutations and actions, and keeps every subscribed query current by re-running the queries after
// each write and pushing only the results that changed.
import type { JSONValue } from "convex/values";
import type { CallQueue } from "./callQueue";
import { Connection, type Session, type Subscription } from "./connection";
import type { FunctionRunner, Outcome } from "./functions";
import { encodeTs, parseClientMessage, type AddQuery, type ClientMessage, type RemoveQuery, type StateModification } from "./protocol";

const repliesKeptPerSession = 5_000;
const sessionForgottenAfterMs = 10 * 60_000;

export class SyncHub {
  readonly connections = new Set<Connection>();
  private readonly sessions = new Map<string, Session>();
  private ts: bigint = BigInt(Date.now()) * 1_000_000n;
  /** Data may have changed since subscriptions were last re-run. */
  private dirty = false;
  private refreshQueued = false;

  constructor(
    private readonly runner: FunctionRunner,
    private readonly queue: CallQueue,
    /** Called inside the queue after anything that may have written. */
    private readonly afterWrite: () => Promise<void>,
  ) {}

  /** A new commit timestamp: nanoseconds of wall time, strictly increasing. */
  private nextTs(): bigint {
    const now = BigInt(Date.now()) * 1_000_000n;
    this.ts = now > this.ts ? now : this.ts + 1n;
    return this.ts;
  }

  attach(connection: Connection): void {
    this.connections.add(connection);
    connection.socket.on("message", (data) => this.receive(connection, data.toString()));
    connection.socket.on("close", () => this.detach(connection));
    connection.socket.on("error", () => this.detach(connection));
  }

  private detach(connection: Connection): void {
    connection.dispose();
    this.connections.delete(connection);
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
    void this.queue.run(() => this.handle(connection, message)).catch((error: Error) => {
      connection.fatal(`Test server failed on ${message.type}: ${error.message}`);
    });
  }

  private async handle(connection: Connection, message: ClientMessage): Promise<void> {
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
        return connection.sendTransition([], this.ts);
      case "Action":
        return this.action(connection, message.requestId, message.udfPath, message.args);
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
      if (modification.type === "Add") {
        const subscription: Subscription = { udfPath: modification.udfPath, args: modification.args };
        connection.queries.set(modification.queryId, subscription);
        const outcome = await this.runner.run("query", subscription.udfPath, subscription.args);
        subscription.lastResult = JSON.stringify(outcome);
        changes.push(queryModification(modification.queryId, outcome));
      } else {
        connection.queries.delete(modification.queryId);
        changes.push({ type: "QueryRemoved", queryId: modification.queryId });
      }
    }
    connection.querySetVersion = newVersion;
    connection.sendTransition(changes, this.ts);
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
        connection.sendTransition([], this.ts);
      });
      return;
    }
    session.mutationsInFlight.add(requestId);
    void this.queue
      .run(() => this.mutation(session, requestId, message.udfPath, message.args))
      .catch((error: Error) => session.connection?.fatal(`Test server failed on a mutation: ${error.message}`))
      .finally(() => session.mutationsInFlight.delete(requestId));
  }

  private async mutation(session: Session, requestId: number, udfPath: string, args: JSONValue[]): Promise<void> {
    const outcome = await this.runner.run("mutation", udfPath, args);
    const reply = outcome.ok
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

  private async action(connection: Connection, requestId: number, udfPath: string, args: JSONValue[]): Promise<void> {
    const outcome = await this.runner.run("action", udfPath, args);
    const reply = outcome.ok
      ? { type: "ActionResponse", requestId, success: true, result: outcome.value, logLines: [] }
      : { type: "ActionResponse", requestId, success: false, result: outcome.errorMessage, errorData: outcome.errorData, logLines: [] };
    (connection.session?.connection ?? connection).send(reply);
    this.markDirty();
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
   * Re-runs every subscribed query once (identical queries share one run), pushes the changed results,
   * and acknowledges pending mutation timestamps. Must run inside the call queue.
   */
  async refreshSubscriptions(): Promise<void> {
    this.dirty = false;
    const ts = this.nextTs();
    await this.afterWrite().catch((error: Error) => console.error(`Test server: after-write hook failed: ${error.message}`));
    const results = new Map<string, Promise<Outcome>>();
    for (const connection of this.connections) {
      if (!connection.open || !connection.session) continue;
      const changes: StateModification[] = [];
      for (const [queryId, subscription] of connection.queries) {
        const key = JSON.stringify([subscription.udfPath, subscription.args]);
        let result = results.get(key);
        if (!result) {
          result = this.runner.run("query", subscription.udfPath, subscription.args);
          results.set(key, result);
        }
        const outcome = await result;
        const serialized = JSON.stringify(outcome);
        if (serialized === subscription.lastResult) continue;
        subscription.lastResult = serialized;
        changes.push(queryModification(queryId, outcome));
      }
      if (changes.length > 0 || connection.needsTransition) connection.sendTransition(changes, ts);
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
