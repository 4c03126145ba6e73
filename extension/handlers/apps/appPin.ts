import { APP_LIMITS, SHA256_HEX } from "../../../convex/contract";
import { HandlerError } from "../../worker/errors";

/** The app version a job is pinned to, as the server hands it to the worker with the job. */
export type AppPin = {
  name: string;
  version: number;
  /** Hex SHA-256 of the module's bytes. */
  sha256: string;
  memoryMB: number;
  timeoutMs: number;
};

/** The pin, checked (not retryable when malformed: the same job would carry the same pin everywhere). */
export function checkAppPin(pin: Partial<AppPin> | null | undefined): AppPin {
  const problem = pinProblem(pin);
  if (problem) throw new HandlerError(`bad app pin: ${problem}`, { retryable: false });
  const { name, version, sha256, memoryMB, timeoutMs } = pin as AppPin;
  return { name, version, sha256, memoryMB, timeoutMs };
}

function pinProblem(pin: Partial<AppPin> | null | undefined): string | undefined {
  if (!pin || typeof pin !== "object") return "missing";
  const { name, version, sha256, memoryMB, timeoutMs } = pin;
  const whole = (v: unknown, min: number, max: number) => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
  if (typeof name !== "string" || !APP_LIMITS.namePattern.test(name)) return `name ${JSON.stringify(name)} must match ${APP_LIMITS.namePattern.source}`;
  if (!whole(version, 1, Number.MAX_SAFE_INTEGER)) return `version ${JSON.stringify(version)} must be a whole number from 1`;
  if (typeof sha256 !== "string" || !SHA256_HEX.test(sha256)) return `sha256 ${JSON.stringify(sha256)} must be 64 lowercase hex digits`;
  if (!whole(memoryMB, APP_LIMITS.memoryMBMin, APP_LIMITS.memoryMBMax)) return `memoryMB must be a whole number from ${APP_LIMITS.memoryMBMin} to ${APP_LIMITS.memoryMBMax}`;
  if (!whole(timeoutMs, APP_LIMITS.timeoutMsMin, APP_LIMITS.timeoutMsMax)) return `timeoutMs must be a whole number from ${APP_LIMITS.timeoutMsMin} to ${APP_LIMITS.timeoutMsMax}`;
  return undefined;
}
