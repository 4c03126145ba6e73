import { convexToJson, getConvexSize, type Value } from "convex/values";
import { fail } from "./errors";
import { LIMITS } from "./limits";
import { storableProblem } from "./storable";

export const CAPABILITY_PATTERN = /^[a-z0-9:._-]{1,64}$/;
// Server-side grants may end in "*" ("ollama:*", or "*" alone) to allow a family of capabilities.
const CAPABILITY_GRANT = /^[a-z0-9:._-]{0,64}\*?$/;

/** Whether a name may be granted to a worker at enrollment: a capability, or a family of them ending in "*". */
export function isCapabilityGrant(name: string): boolean {
  return name.length > 0 && CAPABILITY_GRANT.test(name);
}

export function checkCapabilities(names: string[], what: string, max: number): string[] {
  if (names.length > max) fail("invalid_argument", `${what}: at most ${max} capabilities`);
  for (const name of names) {
    if (!CAPABILITY_PATTERN.test(name)) {
      fail("invalid_argument", `${what}: capability "${name}" must match [a-z0-9:._-]{1,64}`);
    }
  }
  return [...new Set(names)].sort();
}

export function checkCapabilityGrants(names: string[]): string[] {
  if (names.length > LIMITS.capabilitiesPerWorker) {
    fail("invalid_argument", `capabilities: at most ${LIMITS.capabilitiesPerWorker}`);
  }
  for (const name of names) {
    if (!isCapabilityGrant(name)) {
      fail("invalid_argument", `capability grant "${name}" must match [a-z0-9:._-]{1,64}, optionally ending in *`);
    }
  }
  return [...new Set(names)].sort();
}

export function checkIntegerInRange(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail("invalid_argument", `${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

export function checkText(value: string, name: string, maxChars: number, allowEmpty = false): string {
  if (!allowEmpty && value.trim().length === 0) fail("invalid_argument", `${name} must not be empty`);
  if (value.length > maxChars) fail("too_large", `${name} is longer than ${maxChars} characters`);
  return value;
}

/** Size of a Convex value as the JSON it travels as, in UTF-8 bytes. */
/** A text's size in UTF-8 bytes (what caps of streamed text count). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(convexToJson(value as Value))).length;
}

/**
 * A stored value's size: the larger of the JSON it travels as and the document space it takes. They differ: a
 * number is 1 byte of JSON ("0") but 9 stored, so 245 KB of JSON numbers fills 1.1 MB of a document (past
 * Convex's 1 MiB); caps and budgets count this, so they hold for both the wire and the database.
 */
export function valueBytes(value: unknown): number {
  const json = value === undefined ? null : value;
  return Math.max(jsonBytes(json), getConvexSize(json as Value));
}

export function checkValueSize(value: unknown, name: string, maxBytes: number): number {
  const problem = storableProblem(value, name);
  if (problem) fail("invalid_argument", `${problem}; it cannot be stored`);
  const json = jsonBytes(value === undefined ? null : value);
  const bytes = valueBytes(value);
  if (bytes > maxBytes) {
    const stored = bytes > json ? ` as stored (${json} bytes of JSON; a number takes 9 bytes stored)` : "";
    fail("too_large", `${name} is ${bytes} bytes${stored}; the cap is ${maxBytes} bytes`);
  }
  return bytes;
}
