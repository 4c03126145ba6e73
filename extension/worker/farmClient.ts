import type { ConvexClient } from "convex/browser";
import type { FunctionArgs, FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";

type Workers = typeof api.workers;

/** A job handed to this worker by workers:claim. */
export type ClaimedJob = FunctionReturnType<Workers["claim"]>[number];
/** The worker's one subscription: offers to claim, cancel notices, a request to declare itself again. */
export type DoorbellValue = FunctionReturnType<Workers["doorbell"]>;
export type HeartbeatResult = FunctionReturnType<Workers["heartbeat"]>;
export type ReadyResult = FunctionReturnType<Workers["ready"]>;
export type PresenceResult = FunctionReturnType<Workers["presence"]>;
/** The worker's concurrency as complete/fail/release/ready declare it (0 = take nothing more). */
export type Slots = NonNullable<FunctionArgs<Workers["complete"]>["slots"]>;
export type Capabilities = FunctionArgs<Workers["claim"]>["capabilities"];
export type ReportedFacts = FunctionArgs<Workers["reportFacts"]>["facts"];
export type ReportFactsResult = FunctionReturnType<Workers["reportFacts"]>;
export type InputsPage = FunctionReturnType<Workers["inputs"]>;

/**
 * The narrow slice of the Convex client the engine needs. The engine only talks to this interface so it can
 * be unit-tested with a fake (which implements the same types, so a server change the engine does not follow
 * breaks the build); `convexFarmClient` adapts a real `ConvexClient`.
 */
export interface FarmClient {
  doorbell(onValue: (v: DoorbellValue) => void, onError: (e: Error) => void): () => void;
  claim(capabilities: Capabilities, max: number): Promise<ClaimedJob[]>;
  /** `stopping`: the engine is stopping (slots 0); the farm shows it offline at once. */
  ready(capabilities: Capabilities, slots: Slots, stopping?: boolean): Promise<ReadyResult>;
  presence(): Promise<PresenceResult>;
  /** `suspended`: the job is frozen on this machine (its owner is using it); the lease is kept all the same. */
  heartbeat(leaseId: string, progress?: number, status?: string, suspended?: boolean): Promise<HeartbeatResult>;
  output(leaseId: string, chunk: string): Promise<void>;
  /** Keep the job's latest checkpoint (base64) on the server; without it the engine keeps none. */
  checkpoint?: (leaseId: string, data: string) => Promise<void>;
  /** A page of the job's inputs (its parents' results); `cursor` null first. Optional for fakes. */
  inputs?: (leaseId: string, cursor: string | null) => Promise<InputsPage>;
  /**
   * `slots`: the worker's concurrency after this job ends; the server then knows what it wants offered.
   * `cpuMs`: the CPU time the attempt used, when measured (the donor's credit; wall time without it).
   */
  complete(leaseId: string, result: unknown, slots?: Slots, cpuMs?: number): Promise<void>;
  fail(leaseId: string, error: string, retryable: boolean, slots?: Slots, cpuMs?: number): Promise<void>;
  release(leaseId: string, slots?: Slots): Promise<void>;
  /** What this machine has (cores, memory, GPUs); jobs with requirements are routed by it. Optional for fakes. */
  reportFacts?(facts: ReportedFacts): Promise<ReportFactsResult>;
  /** Called with true/false as the connection comes and goes; returns an unsubscribe. */
  onConnectionChange?(cb: (connected: boolean) => void): () => void;
}

/** Adapt a real ConvexClient that authenticates with a worker api key. */
export function convexFarmClient(client: ConvexClient, apiKey: string): FarmClient {
  const w = api.workers;
  return {
    doorbell(onValue, onError) {
      return client.onUpdate(w.doorbell, { apiKey }, onValue, onError);
    },
    claim: (capabilities, max) => client.mutation(w.claim, { apiKey, capabilities, max }),
    ready: (capabilities, slots, stopping) => client.mutation(w.ready, stopping ? { apiKey, capabilities, slots, stopping } : { apiKey, capabilities, slots }),
    presence: () => client.mutation(w.presence, { apiKey }),
    heartbeat: (leaseId, progress, status, suspended) =>
      client.mutation(w.heartbeat, withoutUndefined({ apiKey, leaseId, progress, status, suspended })),
    output: async (leaseId, chunk) => {
      await client.mutation(w.output, { apiKey, leaseId, chunk });
    },
    checkpoint: async (leaseId, data) => {
      await client.mutation(w.checkpoint, { apiKey, leaseId, data });
    },
    inputs: (leaseId, cursor) => client.query(w.inputs, { apiKey, leaseId, cursor }),
    complete: async (leaseId, result, slots, cpuMs) => {
      await client.mutation(w.complete, withoutUndefined({ apiKey, leaseId, result, slots, cpuMs }));
    },
    fail: async (leaseId, error, retryable, slots, cpuMs) => {
      await client.mutation(w.fail, withoutUndefined({ apiKey, leaseId, error, retryable, slots, cpuMs }));
    },
    release: async (leaseId, slots) => {
      await client.mutation(w.release, withoutUndefined({ apiKey, leaseId, slots }));
    },
    reportFacts: (facts) => client.mutation(w.reportFacts, { apiKey, facts }),
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

function withoutUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
