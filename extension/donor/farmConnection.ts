import type * as vscode from "vscode";
import { ConvexClient } from "convex/browser";
import type { FunctionReference } from "convex/server";
import type { Membership } from "./membership";

type Entry = { url: string; client: ConvexClient; users: number };

/**
 * One Convex client per window for the farm this machine joined, shared by the engine and the views.
 * It exists only while someone uses it (donating, or a visible Farmhand view), so an idle, hidden
 * Farmhand holds no connection at all. When the farm changes, borrowers of the old client keep it until
 * they are done (a stopping worker still gives its jobs back through it); new borrowers get the new one.
 */
export class FarmConnection implements vscode.Disposable {
  private current: Entry | undefined;
  private readonly all = new Set<Entry>();

  constructor(private readonly membership: Membership) {}

  /** Borrow the client; call `release` when done with it. */
  acquire(): { client: ConvexClient; apiKey: string; release: () => void } | undefined {
    const apiKey = this.membership.apiKey;
    const url = this.membership.url;
    if (!this.membership.joined || !apiKey) return undefined;
    if (this.current?.url !== url) {
      this.current = { url, client: new ConvexClient(url, { unsavedChangesWarning: false }), users: 0 };
      this.all.add(this.current);
    }
    const entry = this.current;
    entry.users++;
    let released = false;
    return {
      client: entry.client,
      apiKey,
      release: () => {
        if (released) return;
        released = true;
        if (--entry.users === 0) this.close(entry);
      },
    };
  }

  /** Subscribe to a query of the joined farm with the worker key; returns the unsubscribe. */
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

  /** Run a mutation of the joined farm with the worker key. */
  async run<M extends FunctionReference<"mutation">>(mutation: M, args: Omit<M["_args"], "apiKey">): Promise<M["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error("this machine has not joined a farm");
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
