import { httpRouter } from "convex/server";
import { ConvexError, convexToJson, type Value } from "convex/values";
import { api, internal } from "./_generated/api";
import { httpAction, type ActionCtx } from "./_generated/server";
import { routeApps } from "./apps/appsHttp";
import type { FarmErrorData } from "./core/errors";
import { bearer, errorResponse, json } from "./core/httpAnswers";
import { batchStatusRoute, getJobRoute, listJobsRoute } from "./queue/jobsHttp";
import { EXPOSITION_CONTENT_TYPE } from "./observability/exposition";
import { parseTraceparent } from "./observability/traceparent";
import { withIdempotencyKey } from "./queue/idempotencyHeader";

/** HTTP API for submitters that are not Convex apps. Auth: `Authorization: Bearer fh_c_…`. */

/** Run a handler with the bearer client key, turning ConvexErrors into JSON errors with HTTP statuses. */
function withClientKey(handler: (ctx: ActionCtx, clientKey: string, request: Request) => Promise<Response>) {
  return httpAction(async (ctx: ActionCtx, request) => {
    const clientKey = bearer(request);
    if (!clientKey) return errorResponse("bad_key", "Missing 'Authorization: Bearer <client key>' header");
    try {
      return await handler(ctx, clientKey, request);
    } catch (error) {
      if (error instanceof ConvexError) {
        const data = error.data as FarmErrorData;
        return errorResponse(data.code, data.message);
      }
      const message = error instanceof Error ? error.message : String(error);
      if (/Validator error|ArgumentValidationError|Value does not match validator|extra field/.test(message)) {
        return errorResponse("invalid_argument", message.split("\n")[0]);
      }
      throw error;
    }
  });
}

/**
 * Why a parsed JSON body cannot travel as Convex function arguments ("$"-prefixed or non-ASCII field
 * names), or null. Without this check ctx.runMutation would throw an uncoded error: a 500.
 */
function convexValueProblem(body: unknown): string | null {
  try {
    convexToJson(body as Value);
    return null;
  } catch (error) {
    return (error instanceof Error ? error.message.split("\n")[0] : String(error)).slice(0, 300);
  }
}

/** "/api/jobs/<id>" → id, "/api/jobs/<id>/cancel" → id; null for anything else. */
function jobIdFromPath(pathname: string, suffix: "" | "/cancel"): string | null {
  const rest = pathname.slice("/api/jobs/".length);
  const id = suffix ? (rest.endsWith(suffix) ? rest.slice(0, -suffix.length) : null) : rest;
  return id && /^[A-Za-z0-9]+$/.test(id) ? id : null;
}

const http = httpRouter();

http.route({
  path: "/api/jobs",
  method: "POST",
  handler: withClientKey(async (ctx, clientKey, request) => {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return errorResponse("invalid_argument", "The body must be a JSON object");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return errorResponse("invalid_argument", "The body must be a JSON object");
    }
    const unsendable = convexValueProblem(body);
    if (unsendable) return errorResponse("invalid_argument", unsendable);
    // the caller's trace context (W3C traceparent header): for every job whose body does not give its own
    const header = request.headers.get("traceparent");
    const traceparent = header === null ? undefined : parseTraceparent(header.trim());
    if (traceparent === null) return errorResponse("invalid_argument", `The traceparent header ${JSON.stringify(header!.slice(0, 80))} is not a W3C trace context`);
    const traced = (job: Record<string, unknown>) => (traceparent === undefined || "traceparent" in job ? job : { ...job, traceparent });
    const fields = body as Record<string, unknown>;
    if (Array.isArray(fields.jobs)) {
      if (request.headers.has("idempotency-key")) return errorResponse("invalid_argument", "Idempotency-Key names one job; give each job of a batch its own externalId");
      const unknown = Object.keys(fields).filter((name) => name !== "jobs" && name !== "seal");
      if (unknown.length > 0) {
        return errorResponse("invalid_argument", `A batch body holds only "jobs" and "seal"; unknown field ${JSON.stringify(unknown[0])}`);
      }
      if (fields.seal !== undefined && typeof fields.seal !== "boolean") return errorResponse("invalid_argument", "seal must be true or false");
      const notObject = fields.jobs.findIndex((job) => typeof job !== "object" || job === null || Array.isArray(job));
      if (notObject >= 0) return errorResponse("invalid_argument", `jobs[${notObject}] must be a JSON object`);
      const seal = fields.seal;
      const jobs = (fields.jobs as Array<Record<string, unknown>>).map(traced);
      const jobIds = await ctx.runMutation(api.jobs.submitBatch, { clientKey, jobs: jobs as never, ...(seal !== undefined ? { seal } : {}) });
      return json({ jobIds }, 201);
    }
    const keyed = withIdempotencyKey(fields, request);
    if (typeof keyed === "string") return errorResponse("invalid_argument", keyed);
    const { jobId, replayed } = await ctx.runMutation(internal.jobs.submitReplayed, { ...(traced(keyed) as Record<string, never>), clientKey } as never);
    // a replay answers as the first submit did, with the IETF draft's marker
    return replayed ? json({ jobId }, 201, { "Idempotent-Replayed": "true" }) : json({ jobId }, 201);
  }),
});

http.route({
  pathPrefix: "/api/jobs/",
  method: "GET",
  handler: withClientKey(async (ctx, clientKey, request) => {
    const jobId = jobIdFromPath(new URL(request.url).pathname, "");
    if (!jobId) return errorResponse("not_found", "No such job");
    return await getJobRoute(ctx, clientKey, jobId, request);
  }),
});

http.route({ path: "/api/jobs", method: "GET", handler: withClientKey(listJobsRoute) });
http.route({ pathPrefix: "/api/batches/", method: "GET", handler: withClientKey(batchStatusRoute) });

http.route({
  pathPrefix: "/api/jobs/",
  method: "POST",
  handler: withClientKey(async (ctx, clientKey, request) => {
    const jobId = jobIdFromPath(new URL(request.url).pathname, "/cancel");
    if (!jobId) return errorResponse("not_found", "No such route; use POST /api/jobs/<id>/cancel");
    return json(await ctx.runMutation(api.jobs.cancel, { clientKey, jobId }));
  }),
});

// The org's metrics for Prometheus (convex/metrics.ts): an operator key's bearer.
http.route({
  path: "/api/metrics",
  method: "GET",
  handler: httpAction(async (ctx, request) => {
    const apiKey = bearer(request);
    if (!apiKey) return errorResponse("bad_key", "Missing 'Authorization: Bearer <operator key>' header");
    try {
      const text = await ctx.runQuery(internal.metrics.scrape, { apiKey, now: Date.now() });
      return new Response(text, { status: 200, headers: { "content-type": EXPOSITION_CONTENT_TYPE, "cache-control": "no-store" } });
    } catch (error) {
      if (!(error instanceof ConvexError)) throw error;
      const data = error.data as FarmErrorData;
      return errorResponse(data.code, data.message);
    }
  }),
});

// Farm apps: publish, delete, and the workers' module downloads.
routeApps(http);

export default http;
