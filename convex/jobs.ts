import { v, type Value } from "convex/values";
import type { Doc, Id } from "./_generated/dataModel";
import { internalMutation, mutation, query, type MutationCtx } from "./_generated/server";
import { clientFromKey, jobInOrg, requireJobInOrg } from "./access/auth";
import { ByteBudget, takeWithinBudget } from "./core/budget";
import { expectSeal, sealNow, sealOf } from "./pipelines/batchSeals";
import { cancelJob } from "./queue/cancel";
import { batchTotals, releaseSealedBatch } from "./pipelines/dependencies";
import { finishJob } from "./queue/transitions";
import { fail } from "./core/errors";
import { jobView, jobListView } from "./queue/jobView";
import { checkIntegerInRange } from "./core/validate";
import { jobStatus } from "./schema";
import { LIMITS } from "./core/limits";
import { checkJobSpec, insertCheckedJob, jobSpec, jobSpecFields, submitChecked } from "./queue/submit";
import { checkText } from "./core/validate";
import { checkWebhookUrl, webhookOf } from "./webhooks/webhooks";
import { takeWebhookToken } from "./webhooks/webhookRateLimit";
import { newSecret } from "./access/keys";
import { jobByExternalId } from "./queue/idempotency";

/** Submitter API: every call takes a client key (`fh_c_…`) and sees only its own org's jobs. */

export const submit = mutation({
  args: { clientKey: v.string(), ...jobSpecFields },
  handler: async (ctx, { clientKey, ...spec }) => {
    const client = await clientFromKey(ctx, clientKey);
    return await insertCheckedJob(ctx, client.orgId, checkJobSpec(spec, Date.now()), client._id);
  },
});

/** jobs:submit for the HTTP route: also says whether the externalId answered with an earlier job (`Idempotent-Replayed`). */
export const submitReplayed = internalMutation({
  args: { clientKey: v.string(), ...jobSpecFields },
  handler: async (ctx, { clientKey, ...spec }) => {
    const client = await clientFromKey(ctx, clientKey);
    return await submitChecked(ctx, client.orgId, checkJobSpec(spec, Date.now()), client._id);
  },
});

/**
 * All or nothing: every job is validated before the first one is written. `seal` (every job of the call in one
 * batch): the batch is a sealed batch (pipelines/batchSeals.ts): its children wait for its seal; `true` seals it after this
 * call's jobs, `false` says more calls follow.
 */
export const submitBatch = mutation({
  args: { clientKey: v.string(), jobs: v.array(jobSpec), seal: v.optional(v.boolean()) },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    if (args.jobs.length > LIMITS.batchCount) fail("too_large", `A batch holds at most ${LIMITS.batchCount} jobs`);
    const now = Date.now();
    const checked = args.jobs.map((spec, i) => naming(i, () => checkJobSpec(spec, now)));
    const totalBytes = checked.reduce((sum, spec) => sum + spec.payloadBytes, 0);
    if (totalBytes > LIMITS.batchPayloadBytes) {
      fail("too_large", `A batch's payloads total ${totalBytes} bytes; the cap is ${LIMITS.batchPayloadBytes}`);
    }
    const sealed = args.seal === undefined ? undefined : sealedBatchOf(checked.map((spec) => spec.batchId));
    if (sealed !== undefined) await expectSeal(ctx, client.orgId, sealed);
    const ids = [];
    // a refusal here (an unknown app) rolls back the jobs inserted before it: all or nothing
    for (const [i, spec] of checked.entries()) ids.push(await naming(i, () => insertCheckedJob(ctx, client.orgId, spec, client._id)));
    if (sealed !== undefined && args.seal) await sealBatchNow(ctx, client.orgId, sealed);
    return ids;
  },
});

/** The one batch of a call that says `seal`. */
function sealedBatchOf(batchIds: Array<string | undefined>): string {
  const batchId = batchIds[0];
  if (batchId === undefined || batchIds.some((id) => id !== batchId)) fail("invalid_argument", "seal: every job of the call must name the same batchId");
  return batchId;
}

async function sealBatchNow(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string) {
  if (await sealNow(ctx, orgId, batchId)) await releaseSealedBatch(ctx, orgId, batchId, finishJob);
}

/**
 * Seal a batch: it takes no more jobs, and its children (which wait for the seal once the batch was submitted with
 * `seal`) are released as soon as every job of it has succeeded — now, if they all have. Sealing again does nothing.
 */
export const sealBatch = mutation({
  args: { clientKey: v.string(), batchId: v.string() },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const batchId = checkText(args.batchId, "batchId", LIMITS.batchIdChars);
    if (!(await batchTotals(ctx, client.orgId, batchId))) fail("not_found", `No batch ${JSON.stringify(batchId.slice(0, 40))} in this org`);
    await sealBatchNow(ctx, client.orgId, batchId);
    return { batchId, sealed: true as const };
  },
});

/** Run one job's step of a batch; a refusal says which job it was about. */
function naming<T>(index: number, step: () => T): T {
  const rename = (error: unknown): never => {
    const data = (error as { data?: { code?: string; message?: string } }).data;
    if (data?.code) fail(data.code as never, `jobs[${index}]: ${data.message}`);
    throw error;
  };
  try {
    const value = step();
    return (value instanceof Promise ? value.catch(rename) : value) as T;
  } catch (error) {
    return rename(error);
  }
}

/** null when the id is unknown, malformed or another org's (indistinguishable on purpose). */
export const get = query({
  args: { clientKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const job = await jobInOrg(ctx, client.orgId, args.jobId);
    return job ? await jobView(ctx, job) : null;
  },
});

export const cancel = mutation({
  args: { clientKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const job = await requireJobInOrg(ctx, client.orgId, args.jobId);
    return await cancelJob(ctx, job, "canceled by submitter");
  },
});

export const byExternalId = query({
  args: { clientKey: v.string(), externalId: v.string() },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const externalId = checkText(args.externalId, "externalId", LIMITS.externalIdChars);
    // this key's own externalIds: another key's job under the same id is another job
    const job = await jobByExternalId(ctx, client.orgId, client._id, externalId);
    return job ? await jobView(ctx, job) : null;
  },
});

export const batchStatus = query({
  args: { clientKey: v.string(), batchId: v.string() },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const batchId = checkText(args.batchId, "batchId", LIMITS.batchIdChars);
    // at most batchStatusScan jobs and TX_BUDGET.rangeReadBytes of them: past either, the counts are partial
    const { rows: jobs, cut } = await takeWithinBudget(
      ctx.db.query("jobs").withIndex("by_org_batch", (q) => q.eq("orgId", client.orgId).eq("batchId", batchId)),
      LIMITS.batchStatusScan + 1,
      new ByteBudget(),
    );
    const truncated = cut || jobs.length > LIMITS.batchStatusScan;
    const counts = { pending: 0, running: 0, succeeded: 0, canceled: 0, dead: 0, waiting: 0 };
    for (const job of jobs.slice(0, LIMITS.batchStatusScan)) counts[job.status]++;
    const total = Math.min(jobs.length, LIMITS.batchStatusScan);
    const seal = await sealOf(ctx, client.orgId, batchId);
    return {
      batchId,
      total,
      counts,
      done: total > 0 && counts.pending + counts.running + counts.waiting === 0,
      truncated,
      // only for a batch submitted with `seal`: whether it is sealed yet
      ...(seal ? { sealed: seal.sealedAt !== undefined } : {}),
    };
  },
});

/**
 * Where this client key's jobs report their end: a POST to `url` signed with the returned secret (shown
 * once; calling again sets the url and a new secret). `url: null` removes the webhook: `{ secret: null }`.
 */
export const setWebhook = mutation({
  args: { clientKey: v.string(), url: v.union(v.string(), v.null()) },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const url = args.url === null ? null : checkWebhookUrl(args.url);
    if (url !== null) await takeWebhookToken(ctx, client._id);
    const existing = await webhookOf(ctx, client._id);
    if (url === null) {
      if (existing) await ctx.db.delete(existing._id);
      return { secret: null };
    }
    const secret = newSecret("fh_h_");
    const fields = { url, secret, updatedAt: Date.now() };
    if (existing) await ctx.db.patch(existing._id, fields);
    else await ctx.db.insert("webhooks", { orgId: client.orgId, clientKeyId: client._id, ...fields });
    return { secret };
  },
});

/** Job views a page of `jobs:list` holds at most; a page also stops at the byte budget (a result may be a 1 MiB document). */
export const JOBS_LIST_MAX = 25;

/**
 * A page of this org's jobs, newest first, without their output (`jobs:get` has it): all of them, a batch's, or
 * those of one status. With both a batch and a status, the batch's index serves the page and the status is
 * checked on it, so a page may hold fewer jobs than `limit` (or none) while more follow: go on while `cursor`
 * is not null. A page also ends once its jobs and results have read TX_BUDGET.rangeReadBytes (the job that spends
 * it is the last listed): then `cursor` resumes inside the same index page, after that job.
 */
export const list = query({
  args: { clientKey: v.string(), batchId: v.optional(v.string()), status: v.optional(jobStatus), cursor: v.optional(v.union(v.string(), v.null())), limit: v.optional(v.number()) },
  handler: async (ctx, args) => {
    const client = await clientFromKey(ctx, args.clientKey);
    const numItems = checkIntegerInRange(args.limit ?? 20, "limit", 1, JOBS_LIST_MAX);
    const batchId = args.batchId === undefined ? undefined : checkText(args.batchId, "batchId", LIMITS.batchIdChars);
    const orgId = client.orgId;
    const status = args.status;
    const start = parseListCursor(args.cursor ?? null);
    const query =
      batchId !== undefined
        ? ctx.db.query("jobs").withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
        : status !== undefined
          ? ctx.db.query("jobs").withIndex("by_org_status_created", (q) => q.eq("orgId", orgId).eq("status", status))
          : ctx.db.query("jobs").withIndex("by_org", (q) => q.eq("orgId", orgId));
    // a resumed index page is read again at its own size, so that the job listed last is found in it
    const size = start.inside?.size ?? numItems;
    let page;
    try {
      page = await query.order("desc").paginate({ cursor: start.from, numItems: size });
    } catch {
      fail("invalid_argument", "cursor: not a cursor of this listing (pass back the cursor a page answered, with the same filters)");
    }
    let offset = 0;
    if (start.inside) {
      const last = page.page.findIndex((job) => job._id === start.inside!.lastId);
      // the job listed last is gone (retention, a purge): resume after its place in the index (newest first)
      offset = last >= 0 ? last + 1 : countWhile(page.page, (job) => job._creationTime >= start.inside!.lastCreated);
    }
    const budget = new ByteBudget();
    const jobs = [];
    let taken = 0;
    for (const job of page.page.slice(offset)) {
      if (taken >= numItems || budget.exhausted) break;
      taken++;
      budget.charge(job);
      if (batchId !== undefined && status !== undefined && job.status !== status) continue;
      const view = await jobListView(ctx, job);
      budget.charge({ result: (view.result ?? null) as Value, error: view.error ?? null });
      jobs.push(view);
    }
    const listed = offset + taken;
    const cursor =
      listed < page.page.length ? insideCursor(start.from, size, page.page[listed - 1]) : page.isDone ? null : page.continueCursor;
    return { jobs, cursor };
  },
});

/** A jobs:list cursor that resumes inside an index page: the page's own cursor and size, and the job listed last. */
const INSIDE = "fh.inside~";

function insideCursor(from: string | null, size: number, last: Doc<"jobs">): string {
  return `${INSIDE}${size}~${last._creationTime}~${last._id}~${from ?? ""}`;
}

function parseListCursor(cursor: string | null): { from: string | null; inside?: { size: number; lastCreated: number; lastId: string } } {
  if (cursor === null || !cursor.startsWith(INSIDE)) return { from: cursor };
  const [size, created, lastId, ...from] = cursor.slice(INSIDE.length).split("~");
  const n = Number(size);
  const lastCreated = Number(created);
  if (!Number.isInteger(n) || n < 2 || n > JOBS_LIST_MAX || !Number.isFinite(lastCreated) || !lastId) {
    fail("invalid_argument", "cursor: not a cursor of this listing (pass back the cursor a page answered, with the same filters)");
  }
  const rest = from.join("~");
  return { from: rest === "" ? null : rest, inside: { size: n, lastCreated, lastId } };
}

function countWhile<T>(rows: T[], holds: (row: T) => boolean): number {
  const at = rows.findIndex((row) => !holds(row));
  return at < 0 ? rows.length : at;
}
