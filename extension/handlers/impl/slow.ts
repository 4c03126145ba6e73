import { abortReason, HandlerError } from "../../worker/errors";
import type { ImplContext } from "../protocol";

const SLOW_MAX_SECONDS = 3_600;

/**
 * demo.slow: a job a newcomer can watch (the demo feeds it): `seconds` steps of one second each (1 to 3600), with
 * progress and a checkpoint after every step. Frozen (the donor came back), the steps stop and carry on once thawed;
 * released to another machine, it resumes from the last step done. Light on the CPU: it sleeps between steps.
 */
export async function slow(payload: unknown, ctx: ImplContext): Promise<{ seconds: number; resumedAt: number }> {
  const seconds = (payload as { seconds?: unknown } | null)?.seconds;
  if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 1 || seconds > SLOW_MAX_SECONDS) {
    throw new HandlerError(`demo.slow needs a payload { seconds: whole number from 1 to ${SLOW_MAX_SECONDS} }, got ${JSON.stringify(payload)}`, {
      retryable: false,
    });
  }
  const resumedAt = stepOf(ctx.checkpoint, seconds);
  for (let step = resumedAt; step < seconds; step++) {
    await sleep(1_000, ctx.signal);
    ctx.progress((step + 1) / seconds, `step ${step + 1} of ${seconds}${resumedAt > 0 ? ` (resumed at ${resumedAt})` : ""}`);
    ctx.saveCheckpoint(Buffer.from(String(step + 1)).toString("base64"));
  }
  return { seconds, resumedAt };
}

/** The step a checkpoint says was done (0 without one, or with one this job could not have written). */
function stepOf(checkpoint: string | undefined, seconds: number): number {
  if (checkpoint === undefined) return 0;
  const step = Number(Buffer.from(checkpoint, "base64").toString("utf8"));
  return Number.isInteger(step) && step >= 0 && step <= seconds ? step : 0;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
