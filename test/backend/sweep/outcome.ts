/** How a call ended, for the sweeps: answered, refused with a clear error, or crashed. */
export type Outcome =
  | { kind: "answered"; value: unknown }
  | { kind: "refused"; code: string; message: string }
  | { kind: "crashed"; message: string };

export const KNOWN_CODES = new Set([
  "bad_key",
  "revoked",
  "stale_lease",
  "not_found",
  "invalid_argument",
  "too_large",
  "token_expired",
  "token_used",
  "forbidden",
  "address_refused",
  "rate_limited",
  "idempotency_mismatch",
]);

// Refusals that happen before a function body runs: Convex's argument validators, and the client-side
// serialization of values Convex cannot carry (undefined in arrays, functions, "$"-prefixed field names).
const VALIDATOR_ERROR = /^(Validator error|ArgumentValidationError)/;
const SERIALIZATION_ERROR = /is not a valid Convex value|is not a supported Convex type|^Field name .* (starts with a '\$'|has invalid character|exceeds maximum)/;

function classifyError(error: unknown): Outcome {
  const data = (error as { data?: unknown })?.data;
  if (data !== undefined) {
    const parsed = typeof data === "string" ? safeParse(data) : data;
    const code = (parsed as { code?: unknown })?.code;
    const message = (parsed as { message?: unknown })?.message;
    if (typeof code === "string" && KNOWN_CODES.has(code) && typeof message === "string" && message.length > 0) {
      return { kind: "refused", code, message };
    }
    return { kind: "crashed", message: `ConvexError with unexpected data ${JSON.stringify(parsed)}` };
  }
  const message = error instanceof Error ? error.message : String(error);
  // convex-test's argument validator throws a TypeError for null where an object is expected; a real
  // deployment reports that as an ArgumentValidationError. Either way the function body never ran.
  const stack = error instanceof Error ? (error.stack ?? "") : "";
  if (error instanceof TypeError && /validateFunctionArgs/.test(stack)) return { kind: "refused", code: "validator", message };
  if (VALIDATOR_ERROR.test(message)) return { kind: "refused", code: "validator", message };
  if (SERIALIZATION_ERROR.test(message)) return { kind: "refused", code: "serialization", message };
  return { kind: "crashed", message };
}

export async function outcomeOf(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { kind: "answered", value: await call() };
  } catch (error) {
    return classifyError(error);
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
