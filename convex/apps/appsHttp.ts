import type { HttpRouter } from "convex/server";
import { ConvexError } from "convex/values";
import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import { httpAction, type ActionCtx } from "../_generated/server";
import { APP_LIMITS } from "../core/appLimits";
import { inspectAppModule } from "./appsWasm";
import type { FarmErrorData } from "../core/errors";
import { bearer, errorResponse, json } from "../core/httpAnswers";
import { Sha256 } from "../core/sha256";
import { canonicalJson } from "../core/canonical";

/**
 * The apps' HTTP routes (registered by convex/http.ts):
 *   POST   /api/apps/<name>[?memoryMB=&timeoutMs=&quorum=&maxInstances=&…]   publish (bearer publishing client key, body = module bytes; the validation rules of validationParams)
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

const NUMBER_RULES = ["maxInstances", "maxErrorInstances", "spare", "instanceDeadlineMs"] as const;
const FLAG_RULES = ["homogeneous", "adaptive"] as const;
const PUBLISH_PARAMS = ["memoryMB", "timeoutMs", "quorum", ...NUMBER_RULES, ...FLAG_RULES, "distinct", "cacheTtlMs"];

/**
 * The version's default validation from `?quorum=` and the other rules (`maxInstances`, `maxErrorInstances`, `spare`,
 * `instanceDeadlineMs`, `homogeneous`, `adaptive`, `distinct`), or the problem; the query checks their ranges.
 */
/** The validation an app's jobs get by default, as its version row stores it. */
type ValidationSpec = NonNullable<Doc<"appVersions">["validation"]>;

function validationParams(params: URLSearchParams): ValidationSpec | undefined | string {
  const quorum = numberParam(params, "quorum");
  const rest = [...NUMBER_RULES, ...FLAG_RULES, "distinct"].filter((k) => params.has(k));
  if (quorum === undefined) return rest.length > 0 ? `${rest[0]} needs quorum` : undefined;
  const spec: ValidationSpec = { quorum };
  for (const name of FLAG_RULES) {
    const raw = params.get(name);
    if (raw === null) continue;
    if (raw !== "true" && raw !== "false") return `${name} must be true or false; got ${JSON.stringify(raw.slice(0, 40))}`;
    spec[name] = raw === "true";
  }
  for (const name of NUMBER_RULES) {
    const value = numberParam(params, name);
    if (value !== undefined) spec[name] = value;
  }
  const distinct = params.get("distinct");
  if (distinct !== null) {
    if (distinct !== "machine" && distinct !== "donor") return `distinct must be machine or donor; got ${JSON.stringify(distinct.slice(0, 40))}`;
    spec.distinct = distinct;
  }
  return spec;
}

function versionParam(raw: string | undefined): number | null {
  return raw !== undefined && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null;
}

class TooLarge extends Error {}

/** Chunks are moved into a Blob of their own every this many bytes (see bodyChunks). */
const BLOB_PIECE_BYTES = 1024 * 1024;

/**
 * The module body as one pass of chunks: each is counted against `max` (TooLarge past it, so a body longer
 * than it is never read further), hashed as it passes (no copy for the hash), and kept. Every MiB of chunks
 * becomes a Blob piece, and the pieces one Blob at the end: a runtime that keeps Blob parts by reference (as
 * Node's does) then holds one copy of the module plus at most a MiB of chunks, never the chunks and a joined
 * copy of them together; one that copies parts holds at most two.
 */
function bodyChunks(request: Request, max: number) {
  const header = request.headers.get("content-length");
  const declared = header !== null && /^\d+$/.test(header) ? Number(header) : undefined;
  const hash = new Sha256();
  const pieces: Blob[] = [];
  let chunks: Uint8Array<ArrayBuffer>[] = [];
  let chunkBytes = 0;
  let bytes = 0;
  const reader = request.body?.getReader();
  const supply = async (): Promise<Uint8Array | null> => {
    if (declared !== undefined && declared > max) throw new TooLarge();
    if (!reader) return null;
    const { done, value } = await reader.read();
    if (done) return null;
    bytes += value.length;
    if (bytes > max) {
      await reader.cancel();
      throw new TooLarge();
    }
    hash.update(value);
    chunks.push(value);
    chunkBytes += value.length;
    if (chunkBytes >= BLOB_PIECE_BYTES) {
      pieces.push(new Blob(chunks));
      chunks = [];
      chunkBytes = 0;
    }
    return value;
  };
  return {
    supply,
    /** The whole body once `supply` has answered null: its size, SHA-256 and the module as a Blob. */
    finish: () => {
      const module = new Blob([...pieces, ...chunks], { type: "application/wasm" });
      pieces.length = 0;
      chunks = [];
      return { bytes, sha256: hash.hex(), module };
    },
    cancel: async () => void (await reader?.cancel()),
  };
}

const publish = withKey("client", async (ctx, clientKey, request, path) => {
  if (path.length !== 1) return errorResponse("not_found", "No such route; publish with POST /api/apps/<name>");
  const [name] = path;
  const params = new URL(request.url).searchParams;
  const unknown = [...params.keys()].find((k) => !PUBLISH_PARAMS.includes(k));
  if (unknown) return errorResponse("invalid_argument", `Unknown query parameter ${JSON.stringify(unknown)}; use ${PUBLISH_PARAMS.join(", ")}`);
  const memoryMB = numberParam(params, "memoryMB");
  const timeoutMs = numberParam(params, "timeoutMs");
  const validation = validationParams(params);
  if (typeof validation === "string") return errorResponse("invalid_argument", validation);
  // Key, name and limits first: nothing is read or stored for a caller that would be refused anyway.
  // the version's jobs submitted without `cache` are cached this long (queue/resultCache.ts)
  const cacheTtlMs = numberParam(params, "cacheTtlMs");
  const checked = await ctx.runQuery(internal.apps.checkPublish, { clientKey, name, memoryMB, timeoutMs, ...(validation ? { validation } : {}), ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}) });
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (contentType !== "application/wasm") {
    return errorResponse("invalid_argument", `The body must be a WebAssembly module sent as Content-Type: application/wasm; got ${JSON.stringify(contentType)}`);
  }
  const body = bodyChunks(request, APP_LIMITS.moduleBytesMax);
  let inspected;
  try {
    inspected = await inspectAppModule(body.supply, checked.memoryMB);
  } catch (error) {
    if (error instanceof TooLarge) return errorResponse("too_large", `A module may be at most ${APP_LIMITS.moduleBytesMax} bytes (20 MiB)`);
    throw error;
  }
  if (!inspected.ok) {
    await body.cancel();
    return errorResponse("invalid_argument", `Not an app module: ${inspected.problem}`);
  }
  const { bytes, sha256, module } = body.finish();
  const latest = checked.latest;
  const sameRules = canonicalJson(latest?.validation ?? null) === canonicalJson(checked.validation ?? null) && latest?.cacheTtlMs === checked.cacheTtlMs;
  if (latest && latest.sha256 === sha256 && latest.memoryMB === checked.memoryMB && latest.timeoutMs === checked.timeoutMs && sameRules) {
    return json({ name: latest.name, version: latest.version, sha256, ...(latest.validation ? { validation: latest.validation } : {}), ...(latest.cacheTtlMs !== undefined ? { cacheTtlMs: latest.cacheTtlMs } : {}) });
  }
  const storageId: Id<"_storage"> = await ctx.storage.store(module);
  let recorded;
  try {
    recorded = await ctx.runMutation(internal.apps.recordVersion, {
      clientKey,
      name,
      sha256,
      bytes,
      memoryMB,
      timeoutMs,
      storageId,
      ...(validation ? { validation } : {}),
      ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
    });
  } catch (error) {
    await ctx.storage.delete(storageId);
    throw error;
  }
  // Someone published the same bytes in the meantime: theirs is the version; ours is not kept.
  if (!recorded.created) await ctx.storage.delete(storageId);
  return json({
    name: recorded.name,
    version: recorded.version,
    sha256: recorded.sha256,
    ...(recorded.validation ? { validation: recorded.validation } : {}),
    ...(recorded.cacheTtlMs !== undefined ? { cacheTtlMs: recorded.cacheTtlMs } : {}),
  });
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
