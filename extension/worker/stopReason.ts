import { describeError } from "./errors";

/** Why an engine stopped. Decisions (tell the server or not, the CLI's exit code, the session's notice) read `kind`. */
export type StopReason =
  /** Its owner stopped it (a command, leaving, the window closing, a signal); `detail` says which, for the log. */
  | { kind: "user"; detail?: string }
  /** Asked to finish its running jobs, it did. */
  | { kind: "drained" }
  /** The donation policy let go of it while it held no job. */
  | { kind: "policy"; detail: string }
  /** The farm refused its key (unknown, revoked): nothing more can be said to the server with it. */
  | { kind: "keyRefused"; code: string; message: string }
  /** The farm refused a claim or declaration for good (asking again would fail the same way). */
  | { kind: "refused"; call: "claim" | "ready"; code: string; message: string }
  /** No handler offers a capability. */
  | { kind: "noCapabilities" }
  /** Its handlers could not be probed. */
  | { kind: "startFailed"; message: string };

/** A refused key as a stop reason, or undefined for any other error. */
export function keyRefusalOf(e: unknown): Extract<StopReason, { kind: "keyRefused" }> | undefined {
  const d = describeError(e);
  return d.kind === "refused" ? { kind: "keyRefused", code: d.code ?? "bad_key", message: d.message } : undefined;
}

/** The stop reason as a line for a log or a status. */
export function stopText(r: StopReason): string {
  switch (r.kind) {
    case "user":
      return r.detail ?? "stopped";
    case "drained":
      return "drained";
    case "policy":
      return `paused: ${r.detail}`;
    case "keyRefused":
      return `${r.code === "revoked" ? "this worker's key was revoked" : "the server rejected this worker's key"} (${r.code}): ${r.message}`;
    case "refused":
      return `the server refused this worker's ${r.call} (${r.code}): ${r.message}`;
    case "noCapabilities":
      return "no handlers with capabilities are registered";
    case "startFailed":
      return `could not start: ${r.message}`;
  }
}

const PERMANENT_CODES = new Set(["invalid_argument", "forbidden"]);

/**
 * The stop an error from the farm calls for, or undefined when the engine goes on: a refused key, or a claim or
 * declaration refused for good (asking again would fail the same way, e.g. a capability the server does not accept).
 */
export function stopFor(e: unknown, what: string): StopReason | undefined {
  const refused = keyRefusalOf(e);
  if (refused) return refused;
  const d = describeError(e);
  if ((what === "claim" || what === "ready") && d.code !== undefined && PERMANENT_CODES.has(d.code)) {
    return { kind: "refused", call: what, code: d.code, message: d.message };
  }
  return undefined;
}
