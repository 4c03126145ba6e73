import type { Handler, HandlerSource } from "../worker/handler";

const TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * The handlers this machine offers. The extension (and other extensions, through its API) add handlers here;
 * the worker advertises exactly their capabilities.
 */
export class HandlerRegistry implements HandlerSource {
  private readonly handlers = new Map<string, Handler>();
  private readonly listeners = new Set<() => void>();

  /** Add a handler; returns a function that removes it. */
  register(handler: Handler): () => void {
    if (!handler || typeof handler.run !== "function") throw new TypeError("a handler needs a run(payload, ctx) function");
    if (typeof handler.type !== "string" || !TYPE_PATTERN.test(handler.type)) {
      throw new TypeError(`invalid handler type ${JSON.stringify(handler.type)}: use letters, digits and . _ : - (max 128)`);
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
      for (const c of caps) if (typeof c === "string" && c) all.add(c);
    }
    return [...all].sort();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
