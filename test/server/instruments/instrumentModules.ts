// Wraps the handler of every query, mutation and action the app's modules export, so each execution —
// called by a client, by another function, by the scheduler or by a cron — runs inside its own frame and is
// counted under its own name. convex-test loads functions through this module map and calls `_handler`.
import type { ModuleMap } from "../modules";
import type { Instruments } from "./instruments";

type RegisteredFunction = ((...args: unknown[]) => unknown) & {
  isQuery?: boolean;
  isMutation?: boolean;
  isAction?: boolean;
  _handler: (ctx: unknown, args: unknown) => Promise<unknown>;
};

function isRegisteredFunction(value: unknown): value is RegisteredFunction {
  if (typeof value !== "function") return false;
  const candidate = value as Partial<RegisteredFunction>;
  return typeof candidate._handler === "function" && (candidate.isQuery === true || candidate.isMutation === true || candidate.isAction === true);
}

function instrumentFunction(path: string, original: RegisteredFunction, instruments: Instruments): RegisteredFunction {
  const kind = original.isQuery ? "query" : original.isMutation ? "mutation" : "action";
  const handler = original._handler;
  const wrapped: RegisteredFunction = Object.assign(function (this: unknown, ...args: unknown[]) {
    return original.apply(this, args);
  }, original);
  wrapped._handler = (ctx, args) => instruments.runExecution({ path, kind, counted: true }, () => handler(ctx, args));
  return wrapped;
}

/** "/abs/convex/dir/file.ts" → "dir/file", relative to the folder holding _generated (as convex-test does). */
export function modulePaths(modules: ModuleMap): Map<string, string> {
  const generated = Object.keys(modules).find((key) => key.includes("_generated"));
  const root = generated ? generated.split("_generated")[0] : "";
  const paths = new Map<string, string>();
  for (const key of Object.keys(modules)) {
    if (key.startsWith(root)) paths.set(key, key.slice(root.length).replace(/\.[^./]+$/, ""));
  }
  return paths;
}

export function instrumentModules(modules: ModuleMap, instruments: Instruments): ModuleMap {
  const paths = modulePaths(modules);
  const instrumented: ModuleMap = {};
  for (const [key, load] of Object.entries(modules)) {
    const modulePath = paths.get(key);
    if (modulePath === undefined || modulePath.startsWith("_generated")) {
      instrumented[key] = load;
      continue;
    }
    let wrapped: Promise<Record<string, unknown>> | undefined;
    instrumented[key] = () => {
      wrapped ??= load().then((exports: Record<string, unknown>) => {
        const copy: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(exports)) {
          copy[name] = isRegisteredFunction(value) ? instrumentFunction(`${modulePath}:${name}`, value, instruments) : value;
        }
        return copy;
      });
      wrapped.catch(() => (wrapped = undefined));
      return wrapped;
    };
  }
  return instrumented;
}
