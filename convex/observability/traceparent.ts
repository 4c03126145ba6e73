import { fail } from "../core/errors";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a submitter gives with a job
 * (`version-traceid-parentid-flags`, lowercase hex) is kept with it and handed to each worker that runs it.
 * A later version may add fields after the four: those are dropped, the four kept (as the spec tells a reader of
 * a version it does not know). The all-zero ids and version ff are invalid.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The traceparent as kept (its first four fields), or null when it is not one. */
export function parseTraceparent(value: string): string | null {
  const m = TRACEPARENT.exec(value);
  if (!m) return null;
  const [, version, traceId, parentId, , rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return null;
  return value.slice(0, 55);
}

/** A job spec's traceparent, or an invalid_argument refusal that says what one looks like. */
export function checkTraceparent(value: string): string {
  const kept = parseTraceparent(value);
  if (kept === null) {
    fail("invalid_argument", `traceparent ${JSON.stringify(value.slice(0, 80))} is not a W3C trace context (00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, not all zeros)`);
  }
  return kept;
}
