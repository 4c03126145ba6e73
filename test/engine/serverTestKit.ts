// Small helpers for the loopback server's own tests: real ConvexClients, subscriptions that keep their
// latest result and count their updates, and polling with a deadline.
import { ConvexClient } from "convex/browser";
import { makeFunctionReference, type FunctionReference, type FunctionType } from "convex/server";
import type { TestServer } from "../server/index";

export async function waitFor<T>(read: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Watched<T> = { latest: () => T | undefined; updates: () => number; error: () => Error | undefined; stop: () => void };

/** Subscribes and keeps the latest result; `latest()` is undefined until the first one arrives. */
export function watch<T>(client: ConvexClient, query: FunctionReference<"query">, args: Record<string, unknown> = {}): Watched<T> {
  let latest: T | undefined;
  let updates = 0;
  let error: Error | undefined;
  const stop = client.onUpdate(
    query,
    args,
    (value: T) => {
      latest = value;
      updates++;
    },
    (e: Error) => (error = e),
  );
  return { latest: () => latest, updates: () => updates, error: () => error, stop: () => stop() };
}

/** Makes clients of one server and closes them all at once. */
export class Clients {
  private readonly made: ConvexClient[] = [];

  constructor(private readonly server: () => Pick<TestServer, "url">) {}

  make(): ConvexClient {
    const client = new ConvexClient(this.server().url, { logger: false });
    this.made.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.made.splice(0).map((client) => client.close()));
  }
}

/** One function's stats, zero when it was not called since the last reset. */
export function statsOf(server: Pick<TestServer, "stats">, path: string) {
  return server.stats().functions[path] ?? { calls: 0, conflicts: 0, pushes: 0 };
}

/** A function reference the app's types do not offer (unknown, internal, of another kind): for tests of refusals. */
export function untypedRef<Kind extends FunctionType>(path: string): FunctionReference<Kind, "public", Record<string, unknown>, unknown> {
  return makeFunctionReference<Kind, Record<string, unknown>, unknown>(path);
}
