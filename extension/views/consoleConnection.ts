import * as vscode from "vscode";
import { ConvexClient } from "convex/browser";
import type { FunctionReference } from "convex/server";
import type { Membership } from "../donor/membership";
import type { OperatorKeyStore } from "../donor/operatorKey";

/** The key the console uses: this machine's operator key, else its worker key (which may manage the farm or not). */
export type ConsoleCredential = { url: string; apiKey: string; kind: "operator" | "worker" };

type Entry = { url: string; client: ConvexClient; users: number };

/**
 * The console's own connection to the farm, with the console's credential: the operator key when this machine has
 * one (it is read here and nowhere else: the engine never sees it), else the worker key the machine joined with
 * (a canManage grant from before operator keys). A client exists only while the console uses it; when the
 * credential changes (Leave Farm, Join, an operator key set or forgotten) `onDidChange` fires and the console
 * subscribes again with the new one.
 */
export class ConsoleConnection implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private current: Entry | undefined;
  private readonly all = new Set<Entry>();
  private readonly listeners: vscode.Disposable[];
  private last: string | undefined;

  constructor(
    private readonly membership: Membership,
    private readonly operatorKeys: OperatorKeyStore,
  ) {
    this.last = this.fingerprint();
    const follow = () => {
      const now = this.fingerprint();
      if (now === this.last) return;
      this.last = now;
      this.changed.fire();
    };
    this.listeners = [membership.onDidChange(follow), operatorKeys.onDidChange(follow)];
  }

  credential(): ConsoleCredential | undefined {
    const operator = this.operatorKeys.current;
    if (operator) return { url: operator.url, apiKey: operator.key, kind: "operator" };
    const apiKey = this.membership.apiKey;
    if (this.membership.joined && apiKey) return { url: this.membership.url, apiKey, kind: "worker" };
    return undefined;
  }

  /** Subscribe to a console query with the current credential; undefined without one. Returns the unsubscribe. */
  watch<Q extends FunctionReference<"query">>(
    query: Q,
    args: Omit<Q["_args"], "apiKey">,
    onValue: (value: Q["_returnType"]) => void,
    onError: (error: Error) => void,
  ): (() => void) | undefined {
    const lease = this.acquire();
    if (!lease) return undefined;
    const unsubscribe = lease.client.onUpdate(query, { ...args, apiKey: lease.apiKey }, onValue, onError);
    return () => {
      unsubscribe();
      lease.release();
    };
  }

  /**
   * Follow the connection: `listener(false)` once a connection that was up goes down (or one that never came up
   * within `firstConnectMs`), `listener(true)` when it is up (again). Returns the unsubscribe; undefined without a
   * credential.
   */
  watchConnection(listener: (connected: boolean) => void, firstConnectMs = 15_000): (() => void) | undefined {
    const lease = this.acquire();
    if (!lease) return undefined;
    let last = lease.client.connectionState().isWebSocketConnected;
    let ever = last;
    if (last) listener(true);
    const neverConnected = setTimeout(() => !ever && listener(false), firstConnectMs);
    const unsubscribe = lease.client.subscribeToConnectionState((state) => {
      if (state.isWebSocketConnected === last) return;
      last = state.isWebSocketConnected;
      ever ||= last;
      listener(last);
    });
    return () => {
      clearTimeout(neverConnected);
      unsubscribe();
      lease.release();
    };
  }

  async query<Q extends FunctionReference<"query">>(query: Q, args: Omit<Q["_args"], "apiKey">): Promise<Q["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error("no key to open the console with: join a farm or enter an operator key");
    try {
      return await lease.client.query(query, { ...args, apiKey: lease.apiKey });
    } finally {
      lease.release();
    }
  }

  async run<M extends FunctionReference<"mutation">>(mutation: M, args: Omit<M["_args"], "apiKey">): Promise<M["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error("no key to open the console with: join a farm or enter an operator key");
    try {
      return await lease.client.mutation(mutation, { ...args, apiKey: lease.apiKey });
    } finally {
      lease.release();
    }
  }

  dispose(): void {
    for (const listener of this.listeners) listener.dispose();
    this.changed.dispose();
    for (const entry of [...this.all]) this.close(entry);
  }

  private fingerprint(): string | undefined {
    const c = this.credential();
    return c && JSON.stringify([c.url, c.apiKey]);
  }

  private acquire(): { client: ConvexClient; apiKey: string; release: () => void } | undefined {
    const credential = this.credential();
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

  private close(entry: Entry): void {
    this.all.delete(entry);
    if (this.current === entry) this.current = undefined;
    void entry.client.close();
  }
}
