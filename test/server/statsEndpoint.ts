// GET /__testserver/stats and POST /__testserver/stats/reset on the server's one port, answered before any
// routing of the app's own HTTP routes (see instruments/stats.ts for the shape).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StatsCounter } from "./instruments/stats";

export const statsPath = "/__testserver/stats";
export const statsResetPath = "/__testserver/stats/reset";

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** Answers the request when it is for the stats endpoints; false when it is not. */
export function answerStatsRequest(request: IncomingMessage, response: ServerResponse, stats: StatsCounter): boolean {
  const path = new URL(request.url ?? "/", "http://loopback").pathname;
  const expected = path === statsPath ? "GET" : path === statsResetPath ? "POST" : undefined;
  if (!expected) return false;
  // The body (if any) is not needed; drain it so the connection can be reused.
  request.resume();
  if (request.method !== expected) {
    sendJson(response, 405, { error: `${path} answers ${expected} only` }, { allow: expected });
  } else {
    sendJson(response, 200, expected === "GET" ? stats.snapshot() : stats.reset());
  }
  return true;
}
