import { APP_LIMITS } from "../../convex/contract";
import { HandlerError } from "../worker/errors";

/** The largest checkpoint a job may keep, decoded (the server stores it beside the job, never in the job row). */
export const MAX_CHECKPOINT_BYTES = APP_LIMITS.checkpointBytesMax;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Bytes a base64 text decodes to (the text is assumed well-formed). */
function decodedLength(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * Throw a non-retryable HandlerError unless `data` is a checkpoint a job may keep: standard base64 (padded),
 * at most MAX_CHECKPOINT_BYTES decoded. Non-retryable: the same code would produce the same checkpoint again.
 */
export function checkCheckpoint(data: unknown): string {
  if (typeof data !== "string") throw new HandlerError("a checkpoint must be a base64 string", { retryable: false });
  const tooBig = (bytes: string) =>
    new HandlerError(`checkpoint too big: ${bytes} bytes decoded; a checkpoint may hold at most ${MAX_CHECKPOINT_BYTES} bytes (512 KiB)`, {
      retryable: false,
    });
  // The length alone tells a text far too big, before a regular expression reads it all.
  if (data.length > Math.ceil(MAX_CHECKPOINT_BYTES / 3) * 4) throw tooBig(`about ${Math.floor((data.length / 4) * 3)}`);
  if (!BASE64.test(data)) throw new HandlerError("a checkpoint must be a base64 string (standard alphabet, padded)", { retryable: false });
  if (decodedLength(data) > MAX_CHECKPOINT_BYTES) throw tooBig(String(decodedLength(data)));
  return data;
}
