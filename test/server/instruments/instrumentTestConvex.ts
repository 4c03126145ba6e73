// The convex-test instance tests see (server.t and the argument of server.write): inline handlers given to
// run/query/mutation/action run as executions too, so their writes reach subscribers and the audit like any
// function's. They are not counted as function calls.
import type { Instruments } from "./instruments";

type Handler = (ctx: unknown, args?: unknown) => Promise<unknown>;
const inlineKinds = { query: "query", mutation: "mutation", action: "action" } as const;

export function instrumentTestConvex<T extends object>(t: T, instruments: Instruments): T {
  const inline = (kind: "query" | "mutation" | "action", handler: Handler): Handler => (ctx, args) =>
    instruments.runExecution({ path: "inline", kind, counted: false }, () => handler(ctx, args));
  return new Proxy(t, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property === "run") return (handler: Handler) => (value as (h: Handler) => unknown).call(target, inline("mutation", handler));
      if (property in inlineKinds) {
        const kind = inlineKinds[property as keyof typeof inlineKinds];
        return (functionOrReference: unknown, args?: unknown) =>
          (value as (f: unknown, a?: unknown) => unknown).call(target, typeof functionOrReference === "function" ? inline(kind, functionOrReference as Handler) : functionOrReference, args);
      }
      if (property === "withIdentity" || property === "withRequestMetadata") {
        return (...args: unknown[]) => instrumentTestConvex((value as (...a: unknown[]) => T).apply(target, args), instruments);
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
