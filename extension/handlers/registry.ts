import type { Handler, HandlerSource } from "../worker/handler";

import { CAPABILITY_PATTERN } from "../../convex/contract";

/**
 * The handlers this machine offers. The extension (and other extensions, through its API) add handlers here;
 * the worker advertises exactly their capabilities.
 */
export class HandlerRegistry implements HandlerSource {
  private readonly handlers = new Map<string, Handler>();
  private readonly listeners = new Set<() => void>();
  private batching = 0;
  private changedInBatch = false;

  /** Add a handler; returns a function that removes it. */
  register(handler: Handler): () => void {
    if (!handler || typeof handler.run !== "function") throw new TypeError("a handler needs a run(payload, ctx) function");
    if (typeof handler.type !== "string" || !CAPABILITY_PATTERN.test(handler.type)) {
      throw new TypeError(`invalid handler type ${JSON.stringify(handler.type)}: use lowercase letters, digits and . _ : - (max 64)`);
    }
    if (this.handlers.has(handler.type)) throw new Error(`a handler for "${handler.type}" is already registered`);
    this.handlers.set(handler.type, handler);
    this.changed();
    return () => {
      if (this.handlers.get(handler.type) === handler) {
        this.handlers.delete(handler.type);
        this.changed();
      }
    };
  }

  get(type: string): Handler | undefined {
    return this.handlers.get(type);
  }

  types(): string[] {
    return [...this.handlers.keys()].sort();
  }

  /** Called when handlers come or go (a running worker must restart to advertise the new set). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async capabilities(): Promise<string[]> {
    const all = new Set<string>();
    for (const handler of this.handlers.values()) {
      let caps: string[];
      try {
        caps = handler.capabilities ? await handler.capabilities() : [handler.type];
      } catch {
        caps = [];
      }
      // A capability the server would refuse would make every watch and claim fail: leave it out.
      for (const c of caps) if (typeof c === "string" && CAPABILITY_PATTERN.test(c)) all.add(c);
    }
    return [...all].sort();
  }

  /** Make several changes that listeners hear about once, at the end (a settings reload swaps many handlers). */
  batch(change: () => void): void {
    this.batching++;
    try {
      change();
    } finally {
      if (--this.batching === 0 && this.changedInBatch) {
        this.changedInBatch = false;
        this.changed();
      }
    }
  }

  private changed(): void {
    if (this.batching > 0) {
      this.changedInBatch = true;
      return;
    }
    for (const listener of this.listeners) listener();
  }
}
