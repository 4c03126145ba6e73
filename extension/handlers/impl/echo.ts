import { abortReason, HandlerError } from "../../worker/errors";
import type { ImplContext } from "../protocol";

/**
 * demo.echo: returns its payload. Optional fields: `text` is streamed as output, `delayMs` (≤ 10 min)
 * waits first, abortably — handy for demos and fault tests.
 */
export async function echo(payload: unknown, ctx: ImplContext): Promise<unknown> {
  const p = (payload ?? {}) as { text?: unknown; delayMs?: unknown };
  if (p.delayMs !== undefined) {
    if (typeof p.delayMs !== "number" || !(p.delayMs >= 0 && p.delayMs <= 600_000)) {
      throw new HandlerError(`demo.echo: delayMs must be a number of ms from 0 to 600000, got ${JSON.stringify(p.delayMs)}`, {
        retryable: false,
      });
    }
    await abortableSleep(p.delayMs, ctx.signal);
  }
  if (typeof p.text === "string") ctx.output(p.text);
  return payload ?? null;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    });
  });
}
