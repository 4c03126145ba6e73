import { HandlerError } from "../../worker/errors";

/**
 * demo.sum (payload `{ field }`, run with its inputs): the sum of `result[field]` over its inputs (a parent's
 * result without a numeric field adds nothing) and how many inputs there were. The host hands the inputs in:
 * `{ payload, inputs: [result, …] }` (handlers/withInputs.ts).
 */
export function sum(input: unknown): Promise<unknown> {
  const { payload, inputs } = (input ?? {}) as { payload?: { field?: unknown }; inputs?: unknown };
  const field = payload?.field;
  if (typeof field !== "string" || field.length === 0 || field.length > 128) {
    return Promise.reject(new HandlerError(`demo.sum: payload.field must be a field name (1–128 characters), got ${JSON.stringify(field)?.slice(0, 80)}`, { retryable: false }));
  }
  const results = Array.isArray(inputs) ? inputs : [];
  let total = 0;
  for (const result of results) {
    const value = (result as Record<string, unknown> | null)?.[field];
    if (typeof value === "number" && Number.isFinite(value)) total += value;
  }
  return Promise.resolve({ sum: total, inputs: results.length });
}
