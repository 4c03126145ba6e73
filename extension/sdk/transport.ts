import type { ConvexClient } from "convex/browser";

/**
 * What the SDK needs of a Convex client: a ConvexClient (`convex/browser`) is one, whatever its version, and a test
 * may hand in its own. Typed loosely so a caller's own client fits; the SDK calls it through `typed()`, with the
 * server's function types.
 */
export type Transport = {
  mutation(reference: unknown, args: unknown): Promise<unknown>;
  query(reference: unknown, args: unknown): Promise<unknown>;
  onUpdate(reference: unknown, args: unknown, onChange: (value: unknown) => unknown, onError?: (error: Error) => unknown): () => unknown;
  close(): Promise<void>;
};

/** A transport as the SDK calls it: a ConvexClient's own typed methods. */
export type TypedTransport = Pick<ConvexClient, "mutation" | "query" | "onUpdate" | "close">;

/** The SDK only ever hands a transport the server's function references and their arguments. */
export function typed<K extends keyof Transport>(transport: Pick<Transport, K>): Pick<TypedTransport, K> {
  return transport as unknown as Pick<TypedTransport, K>;
}
