import { v } from "convex/values";
import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { bumpLane, type FinishedStatus } from "./counters";
import { fail } from "./errors";
import { recordEvent } from "./events";
import { kickForJobs } from "./kick";
import { laneFor } from "./laneFor";
import { LIMITS } from "./limits";
import { classOf } from "./requirements";
import { routingCapabilities } from "./routing";
import { checkText } from "./validate";

/**
 * Job dependencies. A child waits (status `waiting`, no lane counted) while `unmetParents` > 0: one per listed
 * parent job not yet succeeded, plus one for its batch while that batch has jobs not yet ended. Each unmet
 * parent is an edge row (table jobDependencies), indexed by parent job and by batch, so a parent's end touches
 * only its own children's edges, and a batch's jobs touch only the batch's row of counters (table batches):
 * the batch's children are read once, when its last job ends. An edge is deleted once met, or with its child.
 */

/** What a submitter writes: job ids as strings, checked (and resolved in the org) at submit. */
export const dependsOnSpec = v.object({
  jobs: v.optional(v.array(v.string())),
  batch: v.optional(v.string()),
});
export type DependsOnSpec = { jobs?: string[]; batch?: string };
export type CheckedDependsOn = { jobs: string[]; batch?: string };

/** The code of a waiting job canceled because a parent ended dead or canceled. */
export const DEPENDENCY_FAILED = "dependency_failed";

/** Shape checks that need no reads (the spec's other checks run beside these). */
export function checkDependsOn(spec: DependsOnSpec | undefined): CheckedDependsOn | undefined {
  if (spec === undefined) return undefined;
  const jobs = [...new Set(spec.jobs ?? [])];
  if (jobs.length > LIMITS.dependsOnJobs) fail("too_large", `dependsOn.jobs holds at most ${LIMITS.dependsOnJobs} jobs`);
  const batch = spec.batch === undefined ? undefined : checkText(spec.batch, "dependsOn.batch", LIMITS.batchIdChars);
  if (jobs.length === 0 && batch === undefined) fail("invalid_argument", "dependsOn needs jobs or a batch");
  return { jobs, batch };
}

async function batchRow(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string) {
  return await ctx.db
    .query("batches")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
    .unique();
}

export type ResolvedParents = {
  dependsOn: { jobs?: Id<"jobs">[]; batch?: string };
  // parents not yet met: the job ids, and the batch when it has jobs not yet ended
  unmetJobs: Id<"jobs">[];
  unmetBatch: boolean;
  // a parent that already ended dead or canceled: the child is canceled at once
  failedParent?: Id<"jobs">;
};

/** The parents must exist in the child's org now, so the graph has no cycles by construction. */
export async function resolveParents(ctx: MutationCtx, orgId: Id<"orgs">, spec: CheckedDependsOn, ownBatch?: string): Promise<ResolvedParents> {
  const ids: Id<"jobs">[] = [];
  const unmetJobs: Id<"jobs">[] = [];
  let failedParent: Id<"jobs"> | undefined;
  for (const [i, raw] of spec.jobs.entries()) {
    const id = ctx.db.normalizeId("jobs", raw);
    const parent = id ? await ctx.db.get(id) : null;
    if (!parent || parent.orgId !== orgId) fail("not_found", `dependsOn.jobs[${i}]: no such job ${JSON.stringify(raw.slice(0, 40))}`);
    ids.push(parent._id);
    if (parent.status === "dead" || parent.status === "canceled") failedParent ??= parent._id;
    else if (parent.status !== "succeeded") unmetJobs.push(parent._id);
  }
  let unmetBatch = false;
  if (spec.batch !== undefined) {
    if (spec.batch === ownBatch) fail("invalid_argument", "A job cannot depend on its own batch");
    const batch = await batchRow(ctx, orgId, spec.batch);
    if (!batch) fail("not_found", `dependsOn.batch: no batch ${JSON.stringify(spec.batch.slice(0, 40))} in this org`);
    if (batch.failed > 0) failedParent ??= batch.firstFailed;
    unmetBatch = batch.unfinished > 0;
  }
  return { dependsOn: { ...(ids.length ? { jobs: ids } : {}), ...(spec.batch !== undefined ? { batch: spec.batch } : {}) }, unmetJobs, unmetBatch, failedParent };
}

/** Record the unmet edges of a child just inserted as waiting. */
export async function insertEdges(ctx: MutationCtx, orgId: Id<"orgs">, childId: Id<"jobs">, parents: ResolvedParents) {
  for (const parentId of parents.unmetJobs) await ctx.db.insert("jobDependencies", { orgId, childId, parentId });
  if (parents.unmetBatch) await ctx.db.insert("jobDependencies", { orgId, childId, batchId: parents.dependsOn.batch });
}

export function unmetCount(parents: ResolvedParents): number {
  return parents.unmetJobs.length + (parents.unmetBatch ? 1 : 0);
}

/** A job joins its batch (at submit): the batch's children now wait for it too. */
export async function noteBatchJobAdded(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string | undefined) {
  if (batchId === undefined) return;
  const batch = await batchRow(ctx, orgId, batchId);
  if (batch) await ctx.db.patch(batch._id, { unfinished: batch.unfinished + 1 });
  else await ctx.db.insert("batches", { orgId, batchId, unfinished: 1, succeeded: 0, failed: 0 });
}

/** A dead letter of a batch is retried: it is unfinished again. */
export async function noteBatchJobRetried(ctx: MutationCtx, job: Doc<"jobs">) {
  if (job.batchId === undefined) return;
  const batch = await batchRow(ctx, job.orgId, job.batchId);
  if (batch) await ctx.db.patch(batch._id, { unfinished: batch.unfinished + 1, failed: Math.max(0, batch.failed - 1) });
}

/** The code of an app job whose parents' results total more than its stdin may carry (LIMITS.appInputsBytes). */
export const INPUTS_TOO_LARGE = "inputs_too_large";

/** lib/transitions.ts finishJob, passed in so that this module does not import transitions. */
export type Finish = (
  ctx: MutationCtx,
  job: Doc<"jobs">,
  status: FinishedStatus,
  extra: { error: string; detail: string; code: string; failedParent?: Id<"jobs"> },
) => Promise<void>;

/**
 * The one hook of a job's end (lib/transitions.ts finishJob, after the job row is final): its batch's
 * counters, its children's edges, and, for a waiting job that ends (canceled), its own edges.
 * `resultBytes`: the size of the result it ended with (a batch sums them, for its children's inputs).
 */
export async function noteJobEnded(ctx: MutationCtx, job: Doc<"jobs">, status: FinishedStatus, finish: Finish, resultBytes = 0) {
  if (job.status === "waiting") {
    for (const edge of await ctx.db.query("jobDependencies").withIndex("by_child", (q) => q.eq("childId", job._id)).collect()) {
      await ctx.db.delete(edge._id);
    }
  }
  const ok = status === "succeeded";
  for (const edge of await ctx.db.query("jobDependencies").withIndex("by_parent", (q) => q.eq("parentId", job._id)).collect()) {
    await settleEdge(ctx, edge, ok, job._id, `parent job ${job._id} ended ${status}`, finish);
  }
  if (job.batchId === undefined) return;
  const batch = await batchRow(ctx, job.orgId, job.batchId);
  if (!batch) return;
  const unfinished = Math.max(0, batch.unfinished - 1);
  await ctx.db.patch(batch._id, {
    unfinished,
    ...(ok
      ? { succeeded: batch.succeeded + 1, resultBytes: (batch.resultBytes ?? 0) + resultBytes }
      : { failed: batch.failed + 1, firstFailed: batch.firstFailed ?? job._id }),
  });
  // the batch's children are read only when it fails or when its last job ends
  if (ok && (unfinished > 0 || batch.failed > 0)) return;
  const batchId = job.batchId;
  const why = ok ? "" : `batch ${JSON.stringify(batchId)}'s job ${job._id} ended ${status}`;
  for (const edge of await ctx.db
    .query("jobDependencies")
    .withIndex("by_org_batch", (q) => q.eq("orgId", job.orgId).eq("batchId", batchId))
    .collect()) {
    await settleEdge(ctx, edge, ok, job._id, why, finish);
  }
}

async function settleEdge(ctx: MutationCtx, edge: Doc<"jobDependencies">, met: boolean, parentId: Id<"jobs">, why: string, finish: Finish) {
  await ctx.db.delete(edge._id);
  const child = await ctx.db.get(edge.childId);
  if (!child || child.status !== "waiting") return;
  if (!met) return await finish(ctx, child, "canceled", { error: why, detail: why, code: DEPENDENCY_FAILED, failedParent: parentId });
  const unmet = (child.unmetParents ?? 1) - 1;
  if (unmet > 0) await ctx.db.patch(child._id, { unmetParents: unmet });
  else await releaseChild(ctx, child, finish);
}

/** What an app job's inputs weigh: its listed parents' results and its batch's (summed as they succeeded). */
async function inputBytes(ctx: MutationCtx, child: Doc<"jobs">): Promise<number> {
  let bytes = 0;
  for (const id of child.dependsOn?.jobs ?? []) bytes += (await ctx.db.get(id))?.resultBytes ?? 0;
  const batchId = child.dependsOn?.batch;
  if (batchId !== undefined) bytes += (await batchRow(ctx, child.orgId, batchId))?.resultBytes ?? 0;
  return bytes;
}

/**
 * Every parent has succeeded: the child is pending in the lane of its routing key (found or made again now).
 * An app job whose inputs would not fit its stdin ends dead at once (code inputs_too_large): no retry helps.
 */
export async function releaseChild(ctx: MutationCtx, child: Doc<"jobs">, finish: Finish) {
  if (child.app) {
    const bytes = await inputBytes(ctx, child);
    if (bytes > LIMITS.appInputsBytes) {
      const why = `its parents' results total ${bytes} bytes; an app's inputs may total ${LIMITS.appInputsBytes}`;
      return await finish(ctx, child, "dead", { error: why, detail: why, code: INPUTS_TOO_LARGE });
    }
  }
  const lane = await laneFor(ctx, child.orgId, routingCapabilities(child.type, child.requiredCapabilities), classOf(child.requirements));
  const now = Date.now();
  const delayed = child.availableAt > now;
  await ctx.db.patch(child._id, { laneId: lane._id, status: "pending", queue: delayed ? "delayed" : "ready", unmetParents: undefined, availableAt: Math.max(now, child.availableAt) });
  await bumpLane(ctx, { orgId: child.orgId, laneId: lane._id }, { pending: 1 });
  await recordEvent(ctx, child, "dependencies-met");
  if (delayed) await ctx.scheduler.runAt(child.availableAt, internal.janitor.promote, { jobId: child._id });
  else await kickForJobs(ctx, child.orgId);
}
