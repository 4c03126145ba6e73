import { api } from "../_generated/api";
import type { ActionCtx } from "../_generated/server";
import { errorResponse, json } from "../core/httpAnswers";

/** GET routes a script uses to follow its jobs: a batch's counts, a page of jobs, and waiting for one job's end. */

const STATUSES = ["pending", "running", "succeeded", "canceled", "dead", "waiting"] as const;
type Status = (typeof STATUSES)[number];
const FINAL: ReadonlySet<string> = new Set(["succeeded", "canceled", "dead"]);

/** `GET /api/jobs/:id?wait=` waits at most this long (s): a long poll under a proxy's usual minute. */
export const WAIT_MAX_S = 60;
/** While it waits, the job is read again after these pauses (ms), growing to the last one. */
const WAIT_POLL_MS = [100, 200, 400, 800, 1_000];

/** `GET /api/batches/<batchId>`: the jobs:batchStatus answer. */
export async function batchStatusRoute(ctx: ActionCtx, clientKey: string, request: Request): Promise<Response> {
  const raw = new URL(request.url).pathname.slice("/api/batches/".length);
  let batchId: string;
  try {
    batchId = decodeURIComponent(raw);
  } catch {
    return errorResponse("invalid_argument", "The batch id in the path is not valid percent-encoding");
  }
  // a "/" in a batch id travels as %2F; a bare one is another route
  if (!batchId || raw.includes("/")) return errorResponse("not_found", "No such route; use GET /api/batches/<batchId>");
  return json(await ctx.runQuery(api.jobs.batchStatus, { clientKey, batchId }));
}

/** `GET /api/jobs?batchId=&status=&cursor=&limit=`: a page of job views (jobs:list), `cursor` null on the last. */
export async function listJobsRoute(ctx: ActionCtx, clientKey: string, request: Request): Promise<Response> {
  const params = new URL(request.url).searchParams;
  const unknown = [...params.keys()].find((k) => !["batchId", "status", "cursor", "limit"].includes(k));
  if (unknown !== undefined) return errorResponse("invalid_argument", `Unknown query parameter ${JSON.stringify(unknown)}; use batchId, status, cursor, limit`);
  const status = params.get("status");
  if (status !== null && !STATUSES.includes(status as Status)) {
    return errorResponse("invalid_argument", `status must be one of ${STATUSES.join(", ")}; got ${JSON.stringify(status.slice(0, 40))}`);
  }
  const limitText = params.get("limit");
  const limit = limitText === null ? undefined : Number(limitText);
  if (limit !== undefined && (!/^\d+$/.test(limitText!) || !Number.isSafeInteger(limit))) {
    return errorResponse("invalid_argument", `limit must be a whole number; got ${JSON.stringify(limitText!.slice(0, 40))}`);
  }
  const batchId = params.get("batchId");
  const cursor = params.get("cursor");
  const page = await ctx.runQuery(api.jobs.list, {
    clientKey,
    ...(batchId !== null ? { batchId } : {}),
    ...(status !== null ? { status: status as Status } : {}),
    ...(cursor ? { cursor } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  return json(page);
}

/**
 * `GET /api/jobs/<id>[?wait=<s>]`: the job view; with `wait`, answered once the job has ended or after that many
 * seconds (at most WAIT_MAX_S), whichever comes first. An HTTP action cannot subscribe, so it reads the job
 * again with a growing pause (WAIT_POLL_MS): a few dozen small queries for a minute's wait.
 */
export async function getJobRoute(ctx: ActionCtx, clientKey: string, jobId: string, request: Request): Promise<Response> {
  const waitText = new URL(request.url).searchParams.get("wait");
  let waitMs = 0;
  if (waitText !== null) {
    const seconds = Number(waitText);
    if (!/^\d+(\.\d+)?$/.test(waitText) || !(seconds >= 0 && seconds <= WAIT_MAX_S)) {
      return errorResponse("invalid_argument", `wait must be a number of seconds from 0 to ${WAIT_MAX_S}; got ${JSON.stringify(waitText.slice(0, 40))}`);
    }
    waitMs = seconds * 1000;
  }
  const deadline = Date.now() + waitMs;
  for (let round = 0; ; round++) {
    const job = await ctx.runQuery(api.jobs.get, { clientKey, jobId });
    if (!job) return errorResponse("not_found", "No such job");
    const left = deadline - Date.now();
    if (FINAL.has(job.status) || left <= 0) return json(job);
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, WAIT_POLL_MS[Math.min(round, WAIT_POLL_MS.length - 1)])));
  }
}
