/**
 * Errors as every surface (engine, CLI, status bar, tree, panel, toasts) tells them apart: by the server's
 * `ConvexError` code (`data.code`, see convex/core/errors.ts) or the network error's system code, never by
 * message text. The message shown is the server's own `data.message`, never the client's wrapper text
 * ("[Request ID: …] Server Error", "Uncaught ConvexError: …", stack lines).
 */

/** How an error reads to the one who caused it. */
export type ErrorKind =
  /** The farm could not be reached at all (network, DNS, refused connection, timeout). */
  | "unreachable"
  /** The farm refused the key or token: unknown, revoked, expired or already used. */
  | "refused"
  /** The key is good, but may not do this (e.g. manage jobs without the right). */
  | "notAllowed"
  /** The request itself was wrong (a bad argument, too large). */
  | "invalid"
  /** What the request named does not exist (in this org). */
  | "notFound"
  /** The job's lease moved on: another worker holds it now. */
  | "staleLease"
  /** Anything else: a bug, a server fault. */
  | "failed";

export type DescribedError = { kind: ErrorKind; message: string; code?: string };

const KIND_BY_CODE: Record<string, ErrorKind> = {
  bad_key: "refused",
  revoked: "refused",
  token_expired: "refused",
  token_used: "refused",
  forbidden: "notAllowed",
  invalid_argument: "invalid",
  too_large: "invalid",
  not_found: "notFound",
  stale_lease: "staleLease",
};

/** System error codes of a connection that never reached the server. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/** One description of any error: what kind it is, and the message to show. */
export function describeError(e: unknown): DescribedError {
  const code = errorCode(e);
  if (code !== undefined) return { kind: KIND_BY_CODE[code] ?? "failed", code, message: serverMessage(e) ?? messageOf(e) };
  const network = networkCode(e);
  if (network) return { kind: "unreachable", code: network, message: `the farm could not be reached (${network})` };
  return { kind: "failed", message: messageOf(e) };
}

/** The `code` of a ConvexError-shaped error, if it has one. Duck-typed: the class may come from another bundle. */
export function errorCode(e: unknown): string | undefined {
  const data = dataOf(e);
  return isRecord(data) && typeof data.code === "string" ? data.code : undefined;
}

/** The message to show for an error from the farm (the server's own words where it sent some). */
export function errorMessage(e: unknown): string {
  return describeError(e).message;
}

export function isKeyError(e: unknown): boolean {
  return describeError(e).kind === "refused";
}

export function isStaleLease(e: unknown): boolean {
  return errorCode(e) === "stale_lease";
}

/** What a handler throws to control retry. Plain errors count as retryable. */
export class HandlerError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable?: boolean } = {}) {
    super(message);
    this.name = "HandlerError";
    this.retryable = options.retryable ?? true;
  }
}

export function isRetryable(e: unknown): boolean {
  const r = isRecord(e) ? e.retryable : undefined;
  return typeof r === "boolean" ? r : true;
}

function dataOf(e: unknown): unknown {
  return isRecord(e) ? e.data : undefined;
}

function serverMessage(e: unknown): string | undefined {
  const data = dataOf(e);
  if (typeof data === "string") return data;
  return isRecord(data) && typeof data.message === "string" ? data.message : undefined;
}

/** The system code of a failed connection, on the error or on its `cause` (fetch wraps it). */
function networkCode(e: unknown): string | undefined {
  for (let current: unknown = e, depth = 0; isRecord(current) && depth < 4; current = current.cause, depth++) {
    if (typeof current.code === "string" && NETWORK_CODES.has(current.code)) return current.code;
    if (current.name === "TimeoutError") return "timeout";
  }
  return undefined;
}

/**
 * Any thrown value's own words (the one fallback for `instanceof Error ? message : String(e)`), without the Convex
 * client's wrapping: its "[Request ID: …] Server Error" line, an "Uncaught Error:" prefix and the server's stack lines.
 */
export function messageOf(e: unknown): string {
  const raw = e instanceof Error ? e.message : typeof e === "string" ? e : String(e);
  const lines = raw
    .split("\n")
    .map((line) => line.replace(/^\[Request ID: [^\]]*\]\s*/, ""))
    .filter((line) => line.trim() !== "" && line.trim() !== "Server Error" && !/^\s+at /.test(line) && !/^\s*Called by client$/.test(line));
  const text = lines.join("\n").replace(/^Uncaught (\w*Error): /, (_, name: string) => (name === "Error" ? "" : `${name}: `));
  return text.trim() || (e instanceof Error ? e.name : "unknown error");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Why a signal was aborted, as an Error (an AbortSignal's reason can be any value). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(reason === undefined ? "aborted" : messageOf(reason));
}
