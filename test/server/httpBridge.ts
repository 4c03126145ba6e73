// Plain HTTP on the server's port: the ConvexHttpClient endpoints (/api/query, /api/mutation, /api/action)
// and, for every other path, the app's own convex/http.ts routes through convex-test's t.fetch. A route's
// execution counts as "http:<METHOD> <declared path or prefix>"; each request is its own caller.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JSONValue } from "convex/values";
import type { TestConvex } from "convex-test";
import type { FunctionKind, FunctionRunner } from "./functions";
import { Origin } from "./instruments/executions";
import type { Instruments } from "./instruments/instruments";
import type { AnySchema } from "./modules";
import type { SyncHub } from "./syncHub";

type Router = { lookup(path: string, method: string): [unknown, string, string] | null };

const clientEndpoints: Record<string, FunctionKind> = {
  "/api/query": "query",
  "/api/mutation": "mutation",
  "/api/action": "action",
};

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** The stats key of a routed request: `http:GET /api/jobs/` for a prefix route (the router says "/api/jobs/*"). */
function routeKey(method: string, routedPath: string): string {
  return `http:${method} ${routedPath.endsWith("*") ? routedPath.slice(0, -1) : routedPath}`;
}

export class HttpBridge {
  constructor(
    private readonly t: TestConvex<AnySchema>,
    private readonly runner: FunctionRunner,
    private readonly hub: SyncHub,
    private readonly instruments: Instruments,
  ) {}

  /** HTTP callers have no connection: they have seen nothing, everything committed counts against them. */
  private origin(): Origin {
    return new Origin(this.instruments.uniqueCaller("http"), 0);
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const url = new URL(request.url ?? "/", "http://loopback");
      const body = await readBody(request);
      const kind = clientEndpoints[url.pathname];
      if (kind && request.method === "POST") await this.callFunction(kind, body, response);
      else await this.route(request, url, body, response);
    } catch (error) {
      if (!response.headersSent) sendJson(response, 500, { error: `Test server error: ${(error as Error).message}` });
      else response.destroy();
    }
  }

  private async callFunction(kind: FunctionKind, body: Buffer, response: ServerResponse): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      return sendJson(response, 400, { code: "BadJsonBody", message: "The request body is not JSON" });
    }
    const request: { path?: unknown; args?: JSONValue } = typeof parsed === "object" && parsed !== null ? parsed : {};
    if (typeof request.path !== "string") {
      return sendJson(response, 400, { code: "BadRequest", message: "The request body needs a string `path`" });
    }
    const path = request.path;
    const call = () => this.runner.run(kind, path, request.args ?? {}, this.origin());
    // A query writes nothing, so it needs no refresh of the subscriptions afterwards.
    const outcome = kind === "query" ? await this.hub.call(call) : await this.hub.callAndRefresh(call);
    if (outcome.ok) sendJson(response, 200, { status: "success", value: outcome.value, logLines: [] });
    else sendJson(response, 560, { status: "error", errorMessage: outcome.errorMessage, errorData: outcome.errorData, logLines: [] });
  }

  private async route(request: IncomingMessage, url: URL, body: Buffer, response: ServerResponse): Promise<void> {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string") headers.set(name, value);
      else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    }
    const method = request.method ?? "GET";
    const init: RequestInit = { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body };
    const router = (await this.runner.defaultExport("http")) as Router | undefined;
    const match = router?.lookup(url.pathname, method);
    const fetch = () => this.t.fetch(url.pathname + url.search, init);
    const run = () =>
      this.instruments.within(this.origin(), () =>
        match ? this.instruments.runExecution({ path: routeKey(match[1], match[2]), kind: "http", counted: true }, fetch) : fetch(),
      );
    // A GET only reads, and may wait (GET /api/jobs/:id?wait= polls for up to a minute): like an action over the
    // sync protocol it runs beside the queue, so the writes it waits for can land meanwhile.
    const answer = method === "GET" ? await run() : await this.hub.callAndRefresh(run);
    const answerHeaders: Record<string, string> = {};
    answer.headers.forEach((value, name) => (answerHeaders[name] = value));
    response.writeHead(answer.status, answerHeaders);
    response.end(Buffer.from(await answer.arrayBuffer()));
  }
}
