import type { ConvexClient } from "convex/browser";
import { anyApi } from "convex/server";

/** A job handed to this worker by workers:claim. */
export type ClaimedJob = {
  jobId: string;
  leaseId: string;
  type: string;
  payload: unknown;
  attempt: number;
  leaseMs: number;
};

export type WatchResult = { available: boolean; nextAvailableAt?: number };
export type HeartbeatResult = { cancel: boolean; leaseExpiresAt?: number };
export type MineEntry = { jobId: string; leaseId?: string; cancel?: boolean; cancelRequested?: boolean };

/**
 * The narrow slice of the Convex client the engine needs. The engine only talks to this interface so it can
 * be unit-tested with a fake; `convexFarmClient` adapts a real `ConvexClient`.
 */
export interface FarmClient {
  watch(capabilities: string[], onValue: (v: WatchResult) => void, onError: (e: Error) => void): () => void;
  mine(onValue: (v: MineEntry[]) => void, onError: (e: Error) => void): () => void;
  claim(capabilities: string[], max: number): Promise<ClaimedJob[]>;
  heartbeat(leaseId: string, progress?: number, status?: string): Promise<HeartbeatResult>;
  output(leaseId: string, chunk: string): Promise<void>;
  complete(leaseId: string, result: unknown): Promise<void>;
  fail(leaseId: string, error: string, retryable: boolean): Promise<void>;
  release(leaseId: string): Promise<void>;
  /** Called with true/false as the connection comes and goes; returns an unsubscribe. */
  onConnectionChange?(cb: (connected: boolean) => void): () => void;
}

/** Adapt a real ConvexClient that authenticates with a worker api key. */
export function convexFarmClient(client: ConvexClient, apiKey: string): FarmClient {
  const w = anyApi.workers;
  return {
    watch(capabilities, onValue, onError) {
      return client.onUpdate(w.watch, { apiKey, capabilities }, onValue, onError);
    },
    mine(onValue, onError) {
      return client.onUpdate(w.mine, { apiKey }, (v: unknown) => onValue(normaliseMine(v)), onError);
    },
    claim: (capabilities, max) => client.mutation(w.claim, { apiKey, capabilities, max }),
    heartbeat: (leaseId, progress, status) =>
      client.mutation(w.heartbeat, dropUndefined({ apiKey, leaseId, progress, status })),
    output: async (leaseId, chunk) => {
      await client.mutation(w.output, { apiKey, leaseId, chunk });
    },
    complete: async (leaseId, result) => {
      await client.mutation(w.complete, { apiKey, leaseId, result });
    },
    fail: async (leaseId, error, retryable) => {
      await client.mutation(w.fail, { apiKey, leaseId, error, retryable });
    },
    release: async (leaseId) => {
      await client.mutation(w.release, { apiKey, leaseId });
    },
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

function normaliseMine(v: unknown): MineEntry[] {
  if (Array.isArray(v)) return v as MineEntry[];
  if (v && typeof v === "object" && Array.isArray((v as { jobs?: unknown }).jobs)) return (v as { jobs: MineEntry[] }).jobs;
  return [];
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
