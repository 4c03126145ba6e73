// Wire types of the Convex sync protocol, seen from the server side.
// Mirrors node_modules/convex/src/browser/sync/protocol.ts (client messages in, server messages out).
import type { JSONValue } from "convex/values";

export type QueryId = number;

export type AddQuery = {
  type: "Add";
  queryId: QueryId;
  udfPath: string;
  args: JSONValue[];
  journal?: string | null;
  componentPath?: string;
};
export type RemoveQuery = { type: "Remove"; queryId: QueryId };

export type ClientMessage =
  | {
      type: "Connect";
      sessionId: string;
      connectionCount: number;
      lastCloseReason: string | null;
      maxObservedTimestamp?: string;
      clientTs?: number;
    }
  | { type: "ModifyQuerySet"; baseVersion: number; newVersion: number; modifications: (AddQuery | RemoveQuery)[] }
  | { type: "Mutation"; requestId: number; udfPath: string; args: JSONValue[]; componentPath?: string }
  | { type: "Action"; requestId: number; udfPath: string; args: JSONValue[]; componentPath?: string }
  | { type: "Authenticate"; tokenType: "Admin" | "User" | "None"; value?: string; baseVersion: number }
  | { type: "Event"; eventType: string; event: unknown };

export type StateVersion = { querySet: number; identity: number; ts: bigint };

export type StateModification =
  | { type: "QueryUpdated"; queryId: QueryId; value: JSONValue; logLines: string[]; journal: null }
  | {
      type: "QueryFailed";
      queryId: QueryId;
      errorMessage: string;
      errorData?: JSONValue;
      logLines: string[];
      journal: null;
    }
  | { type: "QueryRemoved"; queryId: QueryId };

/** Timestamps travel as unsigned 64-bit little-endian integers in base64. */
export function encodeTs(ts: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(ts);
  return bytes.toString("base64");
}

export function decodeTs(encoded: string): bigint {
  return Buffer.from(encoded, "base64").readBigUInt64LE();
}

function encodeVersion(version: StateVersion) {
  return { querySet: version.querySet, identity: version.identity, ts: encodeTs(version.ts) };
}

export function transitionMessage(start: StateVersion, end: StateVersion, modifications: StateModification[]) {
  return {
    type: "Transition" as const,
    startVersion: encodeVersion(start),
    endVersion: encodeVersion(end),
    modifications,
  };
}

export type MutationResponse =
  | { type: "MutationResponse"; requestId: number; success: true; result: JSONValue; ts: string; logLines: string[] }
  | ({ type: "MutationResponse"; requestId: number; success: false; result: string; logLines: string[] } & {
      errorData?: JSONValue;
    });

export type ActionResponse =
  | { type: "ActionResponse"; requestId: number; success: true; result: JSONValue; logLines: string[] }
  | ({ type: "ActionResponse"; requestId: number; success: false; result: string; logLines: string[] } & {
      errorData?: JSONValue;
    });

const clientMessageTypes = new Set(["Connect", "ModifyQuerySet", "Mutation", "Action", "Authenticate", "Event"]);

/** Parses one WebSocket frame; throws a readable error for anything that is not a client message. */
export function parseClientMessage(frame: string): ClientMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(frame);
  } catch {
    throw new Error(`Message is not JSON: ${frame.slice(0, 80)}`);
  }
  if (typeof parsed !== "object" || parsed === null || !clientMessageTypes.has((parsed as { type?: string }).type ?? "")) {
    throw new Error(`Unknown client message: ${frame.slice(0, 80)}`);
  }
  return parsed as ClientMessage;
}
