/** Server error codes (ConvexError data.code) the engine reacts to. */
export const KEY_ERROR_CODES = new Set(["bad_key", "revoked"]);

/** The `code` of a ConvexError-shaped error, if it has one. Duck-typed: the class may come from another bundle. */
export function errorCode(e: unknown): string | undefined {
  const data = (e as { data?: unknown } | null)?.data;
  if (data && typeof data === "object" && typeof (data as { code?: unknown }).code === "string") {
    return (data as { code: string }).code;
  }
  return undefined;
}

/** The human message of an error, preferring a ConvexError's data.message. */
export function errorMessage(e: unknown): string {
  const data = (e as { data?: unknown } | null)?.data;
  if (data && typeof data === "object" && typeof (data as { message?: unknown }).message === "string") {
    return (data as { message: string }).message;
  }
  if (typeof data === "string") return data;
  if (e instanceof Error) return e.message;
  return String(e);
}

export function isKeyError(e: unknown): boolean {
  const code = errorCode(e);
  return code !== undefined && KEY_ERROR_CODES.has(code);
}

export function isStaleLease(e: unknown): boolean {
  return errorCode(e) === "stale_lease";
}

/** What a handler throws to control retry. Plain errors count as retryable. */
export class HandlerError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable?: boolean } = {}) {
    super(message);
    this.name = "HandlerError";
    this.retryable = options.retryable ?? true;
  }
}

export function isRetryable(e: unknown): boolean {
  const r = (e as { retryable?: unknown } | null)?.retryable;
  return typeof r === "boolean" ? r : true;
}
