import { valueBytes, LIMITS } from "../../convex/contract";
import { Backoff } from "./backoff";
import { errorCode, errorMessage, isKeyError, isStaleLease, messageOf } from "./errors";
import type { FarmCalls } from "./farmClient";

/** How a job ended on this worker. */
export type JobOutcome =
  | { kind: "succeeded"; result: unknown }
  | { kind: "failed"; error: string; retryable: boolean; handlerFault: boolean }
  | { kind: "canceled" }
  | { kind: "released" }
  /** The lease went stale (the server gave the job to someone else): dropped quietly. */
  | { kind: "lost"; reason: string };

export type EndWrite = {
  client: Pick<FarmCalls, "complete" | "fail" | "release">;
  leaseId: string;
  maxResultBytes: number;
  /** The CPU time the handler's process reported (the donor's credit). */
  cpuMs: number | undefined;
  /** The energy the attempt used (joules), when measured or estimated. */
  energyJ?: number;
};

/**
 * Tell the farm how the job ended; returns the outcome as it stands after the farm's answer (a result it refused is
 * a failure). Throws when the write could not be made (the caller decides what the job's end then is).
 */
export async function writeEnd(w: EndWrite, outcome: JobOutcome): Promise<JobOutcome> {
  const { client, leaseId, cpuMs, energyJ } = w;
  const fail = (error: string, retryable = false) => report(() => client.fail({ leaseId, error, retryable, cpuMs, energyJ }));
  switch (outcome.kind) {
    case "succeeded": {
      const size = resultSize(outcome.result);
      if (typeof size === "string" || size > w.maxResultBytes) {
        const error = typeof size === "string" ? size : `result is ${size} bytes, over the ${w.maxResultBytes}-byte limit`;
        await fail(error);
        return { kind: "failed", error, retryable: false, handlerFault: true };
      }
      try {
        await report(() => client.complete({ leaseId, result: outcome.result, cpuMs, energyJ }));
      } catch (e) {
        if (!isRefusedResult(e)) throw e;
        const error = `the server refused the result: ${errorMessage(e)}`;
        await fail(error);
        return { kind: "failed", error, retryable: false, handlerFault: true };
      }
      return outcome;
    }
    case "failed":
      await fail(outcome.error.slice(0, LIMITS.errorChars), outcome.retryable);
      return outcome;
    case "canceled":
      // The server flagged the job; failing a cancel-requested job is how it ends as canceled.
      await fail("canceled while running");
      return outcome;
    case "released":
      await report(() => client.release({ leaseId }));
      return outcome;
    case "lost":
      return outcome;
  }
}

/** A final write, retried with backoff on server errors that are neither about the lease nor the key. */
async function report(write: () => Promise<unknown>): Promise<void> {
  const backoff = new Backoff(200, 5_000);
  for (;;) {
    try {
      await write();
      return;
    } catch (e) {
      const code = errorCode(e);
      if (isStaleLease(e) || isKeyError(e) || code !== undefined || backoff.attempts >= 4) throw e;
      await sleep(backoff.next());
    }
  }
}

/** The result's size as the server measures it, or why it is not a value the server can take at all. */
function resultSize(value: unknown): number | string {
  try {
    return valueBytes(value);
  } catch (e) {
    return `result is not a value the farm can store: ${messageOf(e)}`;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The server refused the result itself (too large, not storable, not a valid value): retrying cannot help. */
function isRefusedResult(e: unknown): boolean {
  const code = errorCode(e);
  return code === "too_large" || code === "invalid_argument";
}
