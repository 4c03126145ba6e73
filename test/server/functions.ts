// Runs one Convex function by its path ("workers:doorbell", "dir/file:fn") through convex-test, the way a
// deployment would for a client: only public functions of the requested kind, errors turned into the
// { errorMessage, errorData } pair the sync protocol carries. Every run is made on behalf of an origin (the
// caller), which the instruments use to count it and to find its read set.
import { makeFunctionReference, type FunctionReference } from "convex/server";
import { convexToJson, jsonToConvex, type JSONValue, type Value } from "convex/values";
import type { TestConvex } from "convex-test";
import type { Origin } from "./instruments/executions";
import type { Instruments } from "./instruments/instruments";
import { modulePaths } from "./instruments/instrumentModules";
import type { AnySchema, ModuleExports, ModuleMap } from "./modules";

export type FunctionKind = "query" | "mutation" | "action";
export type Outcome = { ok: true; value: JSONValue } | { ok: false; errorMessage: string; errorData?: JSONValue };

const kindFlag = { query: "isQuery", mutation: "isMutation", action: "isAction" } as const;
const kindTitle = { query: "Query", mutation: "Mutation", action: "Action" } as const;

/** "dir/file" → "dir/file:default"; a trailing ".js" on the module is dropped, as the client does. */
export function canonicalPath(udfPath: string): { module: string; name: string; path: string } {
  const colon = udfPath.lastIndexOf(":");
  let module = colon === -1 ? udfPath : udfPath.slice(0, colon);
  const name = colon === -1 ? "default" : udfPath.slice(colon + 1);
  if (module.endsWith(".js")) module = module.slice(0, -3);
  return { module, name, path: `${module}:${name}` };
}

function isConvexError(error: unknown): error is Error & { data: Value } {
  return typeof error === "object" && error !== null && Symbol.for("ConvexError") in error;
}

/** A registered function carries its kind and visibility as flags on the function object. */
type FunctionFlags = Partial<Record<"isPublic" | (typeof kindFlag)[FunctionKind], boolean>>;

function flagsOf(exported: unknown): FunctionFlags | undefined {
  return typeof exported === "function" ? (exported as FunctionFlags) : undefined;
}

function failureFrom(error: unknown): Outcome & { ok: false } {
  if (isConvexError(error)) {
    return { ok: false, errorMessage: `Uncaught ConvexError: ${error.message}`, errorData: convexToJson(error.data) };
  }
  if (error instanceof Error) return { ok: false, errorMessage: `Uncaught ${error.name}: ${error.message}` };
  return { ok: false, errorMessage: `Uncaught ${String(error)}` };
}

export class FunctionRunner {
  private readonly loaders = new Map<string, () => Promise<ModuleExports>>();

  constructor(
    private readonly t: TestConvex<AnySchema>,
    modules: ModuleMap,
    private readonly instruments: Instruments,
  ) {
    for (const [key, path] of modulePaths(modules)) this.loaders.set(path, modules[key]);
  }

  /** The kind of any registered function at this path, public or internal; undefined when there is none. */
  async kindOf(udfPath: string): Promise<FunctionKind | undefined> {
    const { module, name } = canonicalPath(udfPath);
    const load = this.loaders.get(module);
    const flags = flagsOf(load ? (await load())[name] : undefined);
    if (!flags) return undefined;
    return (Object.keys(kindFlag) as FunctionKind[]).find((kind) => flags[kindFlag[kind]]);
  }

  /** Loads a module's default export, or undefined when the module does not exist. */
  async defaultExport(module: string): Promise<unknown> {
    const load = this.loaders.get(module);
    return load ? (await load()).default : undefined;
  }

  /** Returns a failure when the path does not name a public function of this kind. */
  async check(kind: FunctionKind, udfPath: string): Promise<(Outcome & { ok: false }) | null> {
    const { module, name, path } = canonicalPath(udfPath);
    const notFound = {
      ok: false as const,
      errorMessage: `Could not find public function for '${path}'. Did you forget to run \`npx convex dev\` or \`npx convex deploy\`?`,
    };
    const load = this.loaders.get(module);
    if (!load || module.startsWith("_generated")) return notFound;
    const flags = flagsOf((await load())[name]);
    if (!flags?.isPublic) return notFound;
    if (!flags[kindFlag[kind]]) {
      const actual = (Object.keys(kindFlag) as FunctionKind[]).find((k) => flags[kindFlag[k]]);
      const defined = actual ? kindTitle[actual] : "something else";
      return { ok: false, errorMessage: `Trying to execute ${path} as ${kindTitle[kind]}, but it is defined as ${defined}.` };
    }
    return null;
  }

  async run(kind: FunctionKind, udfPath: string, wireArgs: JSONValue[] | JSONValue, origin: Origin, internal = false): Promise<Outcome> {
    const problem = internal ? null : await this.check(kind, udfPath);
    if (problem) return problem;
    const path = canonicalPath(udfPath).path;
    const argsJson = Array.isArray(wireArgs) ? (wireArgs[0] ?? {}) : (wireArgs ?? {});
    try {
      const args = jsonToConvex(argsJson) as Record<string, Value>;
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        return { ok: false, errorMessage: `Arguments of ${udfPath} must be an object` };
      }
      const ref = makeFunctionReference<FunctionKind>(path);
      const call = this.t[kind] as (ref: FunctionReference<FunctionKind>, args: Record<string, Value>) => Promise<Value | undefined>;
      const value = await this.instruments.within(origin, () => call(ref, args));
      return { ok: true, value: convexToJson(value === undefined ? null : value) };
    } catch (error) {
      return failureFrom(error);
    } finally {
      // Refused before its handler ran (bad arguments): still a call, as on a deployment.
      if (!origin.root && origin.counted) this.instruments.stats.call(path);
    }
  }
}
