import type * as vscode from "vscode";
import { ConvexClient } from "convex/browser";
import type { FunctionReference } from "convex/server";
import { connectionChanged, opened } from "../donorState/connectionHistory";

/** The farm a key belongs to, and the key every call sends as `apiKey`. */
export type Credential = { url: string; apiKey: string };

type Entry = { url: string; client: ConvexClient; users: number };

/**
 * One Convex client per farm URL for one key, lent out while someone uses it (so an idle, hidden Farmhand holds no
 * connection at all), with that key added to every call. `credential` is read on every borrow: when the farm
 * changes, borrowers of the old client keep it until they are done (a stopping worker still gives its jobs back
 * through it); new borrowers get the new one. The worker key's connection (FarmConnection) and the console's
 * (ConsoleConnection) are both this, each with its own key.
 */
export class KeyedConnection implements vscode.Disposable {
  private current: Entry | undefined;
  private readonly all = new Set<Entry>();

  constructor(
    private readonly credentialOf: () => Credential | undefined,
    /** What a call without a key is refused with. */
    private readonly noKey: string,
  ) {}

  /** Borrow the client and the key; call `release` when done with it. Undefined without a key. */
  acquire(): { client: ConvexClient; apiKey: string; release: () => void } | undefined {
    const credential = this.credentialOf();
    if (!credential) return undefined;
    if (this.current?.url !== credential.url) {
      this.current = { url: credential.url, client: new ConvexClient(credential.url, { unsavedChangesWarning: false }), users: 0 };
      this.all.add(this.current);
    }
    const entry = this.current;
    entry.users++;
    let released = false;
    return {
      client: entry.client,
      apiKey: credential.apiKey,
      release: () => {
        if (released) return;
        released = true;
        if (--entry.users === 0) this.close(entry);
      },
    };
  }

  /**
   * Subscribe to a query with the key; returns the unsubscribe, undefined without a key. `onConnection`: told the
   * connection's state at once and on every change.
   */
  watch<Q extends FunctionReference<"query">>(
    query: Q,
    args: Omit<Q["_args"], "apiKey">,
    onValue: (value: Q["_returnType"]) => void,
    onError: (error: Error) => void,
    onConnection?: (connected: boolean) => void,
  ): (() => void) | undefined {
    const lease = this.acquire();
    if (!lease) return undefined;
    const unsubscribe = lease.client.onUpdate(query, { ...args, apiKey: lease.apiKey }, onValue, onError);
    let unconnection: (() => void) | undefined;
    if (onConnection) {
      let last: boolean | undefined;
      const emit = (connected: boolean) => connected !== last && onConnection((last = connected));
      emit(lease.client.connectionState().isWebSocketConnected);
      unconnection = lease.client.subscribeToConnectionState((s) => emit(s.isWebSocketConnected));
    }
    return () => {
      unconnection?.();
      unsubscribe();
      lease.release();
    };
  }

  /**
   * Follow the connection alone: `listener(false)` once a connection that was up goes down (or one that never came
   * up within `firstConnectMs`), `listener(true)` when it is up (again). Returns the unsubscribe; undefined without
   * a key.
   */
  watchConnection(listener: (connected: boolean) => void, firstConnectMs = 15_000): (() => void) | undefined {
    const lease = this.acquire();
    if (!lease) return undefined;
    const upNow = lease.client.connectionState().isWebSocketConnected;
    let history = connectionChanged(opened(Date.now()), upNow, Date.now());
    if (upNow) listener(true);
    const neverConnected = setTimeout(() => history.kind === "never" && listener(false), firstConnectMs);
    const unsubscribe = lease.client.subscribeToConnectionState(({ isWebSocketConnected: up }) => {
      if (up === (history.kind === "online")) return;
      history = connectionChanged(history, up, Date.now());
      listener(up);
    });
    return () => {
      clearTimeout(neverConnected);
      unsubscribe();
      lease.release();
    };
  }

  async query<Q extends FunctionReference<"query">>(query: Q, args: Omit<Q["_args"], "apiKey">): Promise<Q["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error(this.noKey);
    try {
      return await lease.client.query(query, { ...args, apiKey: lease.apiKey });
    } finally {
      lease.release();
    }
  }

  async run<M extends FunctionReference<"mutation">>(mutation: M, args: Omit<M["_args"], "apiKey">): Promise<M["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error(this.noKey);
    try {
      return await lease.client.mutation(mutation, { ...args, apiKey: lease.apiKey });
    } finally {
      lease.release();
    }
  }

  dispose(): void {
    for (const entry of [...this.all]) this.close(entry);
  }

  private close(entry: Entry): void {
    this.all.delete(entry);
    if (this.current === entry) this.current = undefined;
    void entry.client.close();
  }
}
