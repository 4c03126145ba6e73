import { valueBytes, LIMITS } from "../../convex/contract";
import { HandlerError } from "../worker/errors";
import type { Handler } from "../worker/handler";

/** The code a job fails with when its inputs total more than a handler may be handed at once. */
const INPUTS_TOO_LARGE = "inputs_too_large";

/**
 * A handler whose job code gets its inputs whole: the host reads them (ctx.inputs()) and runs the inner handler
 * with `{ payload, inputs: [result, …] }`. Past `maxBytes` of results the job fails, not retried (the server
 * refuses such an app job before it is offered; this guards the rest).
 */
export function withInputs(inner: Handler, maxBytes: number = LIMITS.appInputsBytes): Handler {
  return {
    type: inner.type,
    timeoutMs: inner.timeoutMs,
    ...(inner.capabilities ? { capabilities: () => inner.capabilities!() } : {}),
    run: async (payload, ctx) => await inner.run({ payload, inputs: await collectInputs(ctx.inputs?.bind(ctx), maxBytes) }, ctx),
  };
}

/** Every input's result, in the server's order; throws inputs_too_large past `maxBytes`. */
export async function collectInputs(inputs: (() => AsyncIterable<{ result: unknown }>) | undefined, maxBytes: number): Promise<unknown[]> {
  const results: unknown[] = [];
  if (!inputs) return results;
  let bytes = 0;
  for await (const input of inputs()) {
    bytes += valueBytes(input.result ?? null);
    if (bytes > maxBytes) throw new HandlerError(`${INPUTS_TOO_LARGE}: the job's inputs total more than ${maxBytes} bytes`, { retryable: false });
    results.push(input.result);
  }
  return results;
}
