import type { HttpRouter } from "convex/server";
import { ConvexError } from "convex/values";
import { internal } from "../_generated/api";
import type { Id } from "../_generated/dataModel";
import { httpAction, type ActionCtx } from "../_generated/server";
import { APP_LIMITS } from "./appLimits";
import { inspectAppModule, initialMegabytes } from "./appsWasm";
import type { FarmErrorData } from "./errors";
import { bearer, errorResponse, json } from "./httpAnswers";

/**
 * The apps' HTTP routes (registered by convex/http.ts):
 *   POST   /api/apps/<name>[?memoryMB=&timeoutMs=]   publish (bearer publishing client key, body = module bytes)
 *   DELETE /api/apps/<name>/<version>                 delete a version's module (publishing client key)
 *   GET    /api/apps/<name>/<version>/module          a version's module bytes (bearer worker key; the worker's
 *                                                     module cache fetches through this, since storage URLs
 *                                                     differ between deployments)
 * Errors are `{ error: { code, message } }` with the status of the code, like the jobs routes.
 */

/** Run with the bearer key, turning coded ConvexErrors into JSON errors. */
function withKey(kind: "client" | "worker", handler: (ctx: ActionCtx, key: string, request: Request, path: string[]) => Promise<Response>) {
  return httpAction(async (ctx: ActionCtx, request) => {
    const key = bearer(request);
    if (!key) return errorResponse("bad_key", `Missing 'Authorization: Bearer <${kind === "client" ? "client key" : "worker key"}>' header`);
    const path = new URL(request.url).pathname.slice("/api/apps/".length).split("/");
    try {
      return await handler(ctx, key, request, path);
    } catch (error) {
      if (error instanceof ConvexError) {
        const data = error.data as FarmErrorData;
        return errorResponse(data.code, data.message);
      }
      throw error;
    }
  });
}

/** A numeric query parameter (undefined when absent, NaN when not a number), range-checked by the query. */
function numberParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  return /^-?\d{1,16}(\.\d{1,16})?$/.test(raw) ? Number(raw) : NaN;
}

function versionParam(raw: string | undefined): number | null {
  return raw !== undefined && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null;
}

/**
 * The body, read no further than `max` bytes; null when it is longer. With a Content-Length the bytes go
 * straight into one buffer of that size: an action's memory is limited, and a module may be 20 MiB.
 */
async function readCapped(request: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const header = request.headers.get("content-length");
  const declared = header !== null && /^\d+$/.test(header) ? Number(header) : undefined;
  if (declared !== undefined && declared > max) return null;
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  let buffer = new Uint8Array(declared ?? 64 * 1024);
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > max) {
      await reader.cancel();
      return null;
    }
    if (total + value.length > buffer.length) {
      const grown = new Uint8Array(Math.min(max, Math.max(buffer.length * 2, total + value.length)));
      grown.set(buffer.subarray(0, total));
      buffer = grown;
    }
    buffer.set(value, total);
    total += value.length;
  }
  return total === buffer.length ? buffer : buffer.slice(0, total);
}

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const publish = withKey("client", async (ctx, clientKey, request, path) => {
  if (path.length !== 1) return errorResponse("not_found", "No such route; publish with POST /api/apps/<name>");
  const [name] = path;
  const params = new URL(request.url).searchParams;
  const unknown = [...params.keys()].find((k) => k !== "memoryMB" && k !== "timeoutMs");
  if (unknown) return errorResponse("invalid_argument", `Unknown query parameter ${JSON.stringify(unknown)}; use memoryMB and timeoutMs`);
  const memoryMB = numberParam(params, "memoryMB");
  const timeoutMs = numberParam(params, "timeoutMs");
  // Key, name and limits first: nothing is read or stored for a caller that would be refused anyway.
  const checked = await ctx.runQuery(internal.apps.checkPublish, { clientKey, name, memoryMB, timeoutMs });
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (contentType !== "application/wasm") {
    return errorResponse("invalid_argument", `The body must be a WebAssembly module sent as Content-Type: application/wasm; got ${JSON.stringify(contentType)}`);
  }
  const bytes = await readCapped(request, APP_LIMITS.moduleBytesMax);
  if (!bytes) return errorResponse("too_large", `A module may be at most ${APP_LIMITS.moduleBytesMax} bytes (20 MiB)`);
  const inspected = inspectAppModule(bytes);
  if (!inspected.ok) return errorResponse("invalid_argument", `Not an app module: ${inspected.problem}`);
  if (initialMegabytes(inspected.summary) > checked.memoryMB) {
    return errorResponse(
      "invalid_argument",
      `The module needs ${initialMegabytes(inspected.summary)} MB of memory at start, more than memoryMB=${checked.memoryMB}`,
    );
  }
  const sha256 = await sha256Hex(bytes);
  const latest = checked.latest;
  if (latest && latest.sha256 === sha256 && latest.memoryMB === checked.memoryMB && latest.timeoutMs === checked.timeoutMs) {
    return json({ name: latest.name, version: latest.version, sha256 });
  }
  const storageId: Id<"_storage"> = await ctx.storage.store(new Blob([bytes], { type: "application/wasm" }));
  let recorded;
  try {
    recorded = await ctx.runMutation(internal.apps.recordVersion, { clientKey, name, sha256, bytes: bytes.length, memoryMB, timeoutMs, storageId });
  } catch (error) {
    await ctx.storage.delete(storageId);
    throw error;
  }
  // Someone published the same bytes in the meantime: theirs is the version; ours is not kept.
  if (!recorded.created) await ctx.storage.delete(storageId);
  return json({ name: recorded.name, version: recorded.version, sha256: recorded.sha256 });
});

const deleteVersion = withKey("client", async (ctx, clientKey, _request, path) => {
  const version = versionParam(path[1]);
  if (path.length !== 2 || version === null) return errorResponse("not_found", "No such route; delete with DELETE /api/apps/<name>/<version>");
  return json(await ctx.runMutation(internal.apps.deleteVersion, { clientKey, name: path[0], version }));
});

const downloadModule = withKey("worker", async (ctx, apiKey, _request, path) => {
  const version = versionParam(path[1]);
  if (path.length !== 3 || path[2] !== "module" || version === null) {
    return errorResponse("not_found", "No such route; download with GET /api/apps/<name>/<version>/module");
  }
  const found = await ctx.runQuery(internal.apps.moduleForWorker, { apiKey, name: path[0], version });
  const blob = await ctx.storage.get(found.storageId);
  if (!blob) return errorResponse("gone", `Version ${version} of app ${path[0]} has no module any more`);
  return new Response(blob, {
    status: 200,
    headers: { "content-type": "application/wasm", "content-length": String(blob.size), etag: `"${found.sha256}"` },
  });
});

export function routeApps(http: HttpRouter): void {
  http.route({ pathPrefix: "/api/apps/", method: "POST", handler: publish });
  http.route({ pathPrefix: "/api/apps/", method: "DELETE", handler: deleteVersion });
  http.route({ pathPrefix: "/api/apps/", method: "GET", handler: downloadModule });
}
