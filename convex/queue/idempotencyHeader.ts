/**
 * The `Idempotency-Key` request header (IETF httpapi draft) is the job's externalId. The draft spells it as a
 * structured-field string (`"abc"`); a bare token is taken as it is. Returns the body with its externalId, or why not.
 */
export function withIdempotencyKey(fields: Record<string, unknown>, request: Request): Record<string, unknown> | string {
  const header = request.headers.get("idempotency-key");
  if (header === null) return fields;
  const trimmed = header.trim();
  const key = /^".*"$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  if (key === "") return "The Idempotency-Key header is empty";
  if (fields.externalId !== undefined && fields.externalId !== key) {
    return "The Idempotency-Key header and the body's externalId differ; give one of them";
  }
  return { ...fields, externalId: key };
}
