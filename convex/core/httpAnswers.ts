/** How the HTTP routes answer (jobs and apps alike): JSON bodies, `{ error: { code, message } }` with the code's status. */

const STATUS_BY_CODE: Record<string, number> = {
  bad_key: 401,
  revoked: 401,
  forbidden: 403,
  not_found: 404,
  gone: 410,
  invalid_argument: 400,
  too_large: 413,
  dependency_cycle: 409,
  idempotency_mismatch: 409,
};

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export function errorResponse(code: string, message: string): Response {
  return json({ error: { code, message } }, STATUS_BY_CODE[code] ?? 400);
}

/** The key in `Authorization: Bearer <key>`, or null. */
export function bearer(request: Request): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "");
  return match ? match[1] : null;
}
