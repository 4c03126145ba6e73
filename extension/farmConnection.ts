import type * as vscode from "vscode";
import { ConvexClient } from "convex/browser";
import type { FunctionReference } from "convex/server";
import type { Membership } from "./membership";

/**
 * One Convex client per window for the farm this machine joined, shared by the engine and the views.
 * It exists only while someone uses it (donating, or a visible Farmhand view), so an idle, hidden
 * Farmhand holds no connection at all.
 */
export class FarmConnection implements vscode.Disposable {
  private client: ConvexClient | undefined;
  private url: string | undefined;
  private users = 0;
  /** Bumped when the client is replaced, so leases on the old one do not count against the new one. */
  private generation = 0;

  constructor(private readonly membership: Membership) {}

  /** Borrow the client; call the returned function when done with it. */
  acquire(): { client: ConvexClient; apiKey: string; release: () => void } | undefined {
    const apiKey = this.membership.apiKey;
    const url = this.membership.url;
    if (!this.membership.joined || !apiKey) return undefined;
    if (this.client && this.url !== url) this.close();
    this.client ??= new ConvexClient(url, { unsavedChangesWarning: false });
    this.url = url;
    this.users++;
    const generation = this.generation;
    let released = false;
    return {
      client: this.client,
      apiKey,
      release: () => {
        if (released || generation !== this.generation) return;
        released = true;
        if (--this.users === 0) this.close();
      },
    };
  }

  /** Subscribe to a query of the joined farm with the worker key; returns the unsubscribe. */
  watch<Q extends FunctionReference<"query">>(
    query: Q,
    args: Omit<Q["_args"], "apiKey">,
    onValue: (value: Q["_returnType"]) => void,
    onError: (error: Error) => void,
  ): (() => void) | undefined {
    const lease = this.acquire();
    if (!lease) return undefined;
    const unsubscribe = lease.client.onUpdate(query, { ...args, apiKey: lease.apiKey } as Q["_args"], onValue, onError);
    return () => {
      unsubscribe();
      lease.release();
    };
  }

  /** Run a mutation of the joined farm with the worker key. */
  async run<M extends FunctionReference<"mutation">>(mutation: M, args: Omit<M["_args"], "apiKey">): Promise<M["_returnType"]> {
    const lease = this.acquire();
    if (!lease) throw new Error("this machine has not joined a farm");
    try {
      return await lease.client.mutation(mutation, { ...args, apiKey: lease.apiKey } as M["_args"]);
    } finally {
      lease.release();
    }
  }

  dispose(): void {
    this.close();
  }

  private close(): void {
    const client = this.client;
    this.client = undefined;
    this.url = undefined;
    this.users = 0;
    this.generation++;
    void client?.close();
  }
}
