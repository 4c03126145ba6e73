import type { ConvexClient } from "convex/browser";
import type { FunctionArgs, FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";

type Workers = typeof api.workers;

/**
 * Every call the engine makes with its key, by name. Adding a server call is one line here: the client, its
 * decorations and every fake are typed from this table.
 */
const FARM_CALLS = {
  claim: api.workers.claim,
  ready: api.workers.ready,
  presence: api.workers.presence,
  heartbeat: api.workers.heartbeat,
  output: api.workers.output,
  checkpoint: api.workers.checkpoint,
  complete: api.workers.complete,
  fail: api.workers.fail,
  release: api.workers.release,
  reportFacts: api.workers.reportFacts,
  inputs: api.workers.inputs,
} as const;
/** The calls of the table that are queries (read only); every other one is a mutation. */
const QUERIES: ReadonlySet<CallName> = new Set<CallName>(["inputs"]);

type Calls = typeof FARM_CALLS;
export type CallName = keyof Calls;
/** A call's arguments as the engine passes them: the function's own, without the key (the client adds it). */
export type CallArgs<K extends CallName> = Omit<FunctionArgs<Calls[K]>, "apiKey">;
export type CallResult<K extends CallName> = FunctionReturnType<Calls[K]>;
export type FarmCalls = { [K in CallName]: (args: CallArgs<K>) => Promise<CallResult<K>> };
const CALL_NAMES = Object.keys(FARM_CALLS) as CallName[];

/** A job handed to this worker by workers:claim. */
export type ClaimedJob = CallResult<"claim">[number];
/** The worker's one subscription: offers to claim, cancel notices, a request to declare itself again. */
export type DoorbellValue = FunctionReturnType<Workers["doorbell"]>;
export type HeartbeatResult = CallResult<"heartbeat">;
/** The worker's concurrency as complete/fail/release/ready declare it (0 = take nothing more). */
export type Slots = NonNullable<CallArgs<"complete">["slots"]>;
export type ReportedFacts = CallArgs<"reportFacts">["facts"];
/** A page of a job's inputs (its parents' results, for jobs submitted with `dependsOn`). */
export type InputsPage = CallResult<"inputs">;

/**
 * The slice of the Convex client the engine needs: the calls above, its one subscription, and the connection's
 * state. The engine only talks to this interface, so a fake typed from the same table stands in for the farm
 * where a test needs a fault the test server cannot produce.
 */
export interface FarmClient extends FarmCalls {
  doorbell(onValue: (v: DoorbellValue) => void, onError: (e: Error) => void): () => void;
  /** Called with true/false as the connection comes and goes; returns an unsubscribe. */
  onConnectionChange?(cb: (connected: boolean) => void): () => void;
}

/** The one way to decorate a client: every call (and the subscription's errors) passes through these. */
export type Decoration = {
  /** Rewrites a call's arguments on the way out (e.g. the slots this engine has free at that moment). */
  args?: <K extends CallName>(name: K, args: CallArgs<K>) => CallArgs<K>;
  /** Sees every failed call and subscription error before the caller does (e.g. a refused key). */
  onError?: (name: CallName | "doorbell", error: unknown) => void;
};

/** Build all calls from one function of the call's name. */
export function eachCall(make: <K extends CallName>(name: K) => FarmCalls[K]): FarmCalls {
  return Object.fromEntries(CALL_NAMES.map((name) => [name, make(name)])) as unknown as FarmCalls;
}

export function decorate(client: FarmClient, decoration: Decoration): FarmClient {
  const { args: rewrite, onError } = decoration;
  return {
    ...eachCall(
      (name) =>
        ((args: CallArgs<typeof name>) =>
          client[name]((rewrite ? rewrite(name, args) : args) as never).catch((e: unknown) => {
            onError?.(name, e);
            throw e;
          })) as FarmCalls[typeof name],
    ),
    doorbell: (onValue, onErr) => client.doorbell(onValue, (e) => (onError?.("doorbell", e), onErr(e))),
    ...(client.onConnectionChange ? { onConnectionChange: (cb: (connected: boolean) => void) => client.onConnectionChange!(cb) } : {}),
  };
}

/** Adapt a real ConvexClient that authenticates with a worker api key. */
export function convexFarmClient(client: ConvexClient, apiKey: string): FarmClient {
  return {
    ...eachCall((name) => ((args: CallArgs<typeof name>) => {
      const withKey = { ...withoutUndefined(args), apiKey };
      return QUERIES.has(name) ? client.query(FARM_CALLS[name] as never, withKey as never) : client.mutation(FARM_CALLS[name] as never, withKey as never);
    })),
    doorbell: (onValue, onError) => client.onUpdate(api.workers.doorbell, { apiKey }, onValue, onError),
    onConnectionChange(cb) {
      let last: boolean | undefined;
      const emit = (connected: boolean) => {
        if (connected !== last) cb((last = connected));
      };
      emit(client.connectionState().isWebSocketConnected);
      return client.subscribeToConnectionState((s) => emit(s.isWebSocketConnected));
    },
  };
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
