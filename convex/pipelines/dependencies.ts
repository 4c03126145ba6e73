import { v } from "convex/values";
import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { ByteBudget, TX_BUDGET } from "../core/budget";
import { bumpLane, type FinishedStatus, recordEvent, kickForJobs, laneFor, classOf, routingCapabilities } from "../lanes/entry";
import { fail } from "../core/errors";
import { LIMITS } from "../core/limits";
import { awaitsSeal, refuseIfSealed, sealOf } from "./batchSeals";
import { edgeVia, refuseCycle } from "./dependencyCycles";
import { moveOf } from "../observability/entry";
import { deleteParentRefs, INPUTS_GONE } from "./parentRefs";
import { armSettlement, EDGES_PER_PAGE, type Settlement } from "./settlements";
import { checkText } from "../core/validate";

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

/**
 * A batch's counters are sharded: BATCH_SHARDS rows per batch, a job counted in the shard its id hashes to (the same
 * shard when it is added, retried and ended), so concurrent completions of one batch mostly write different rows.
 * A shard's counts may go below zero (a job counted in a row from before sharding, which has no shard): only the
 * sums over a batch's rows mean something. A batch has at most BATCH_SHARDS rows and one such older row.
 */
export const BATCH_SHARDS = 8;

/** The shard a job of a batch is counted in (FNV-1a of its id). */
export function batchShardOf(jobId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) hash = Math.imul(hash ^ jobId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % BATCH_SHARDS;
}

async function batchRows(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string) {
  return await ctx.db
    .query("batches")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
    .take(BATCH_SHARDS + 1);
}

/** A batch's counts: the sums over its rows (null: no job ever joined it). `firstFailures`: each shard's first failed job. */
export async function batchTotals(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string) {
  const rows = await batchRows(ctx, orgId, batchId);
  if (rows.length === 0) return null;
  let unfinished = 0;
  let succeeded = 0;
  let failed = 0;
  let resultBytes = 0;
  let purged = 0;
  const firstFailures: Id<"jobs">[] = [];
  for (const row of rows) {
    unfinished += row.unfinished;
    succeeded += row.succeeded;
    failed += row.failed;
    resultBytes += row.resultBytes ?? 0;
    purged += row.purged ?? 0;
    if (row.firstFailed) firstFailures.push(row.firstFailed);
  }
  return { unfinished, succeeded, failed, resultBytes, purged, firstFailures };
}

type BatchTotals = NonNullable<Awaited<ReturnType<typeof batchTotals>>>;

/** Why a child of this batch could not get every result it was promised (succeeded jobs purged since), or null. */
function batchInputsGone(batchId: string, totals: BatchTotals | null): string | null {
  if (!totals || totals.purged === 0) return null;
  return `${totals.purged} succeeded job(s) of its batch ${JSON.stringify(batchId)} were purged: it would run without their results`;
}

/**
 * The batch's earliest failed job: of the shards' first failures (rows come in shard order, not failure order), the
 * one still dead or canceled that ended first (creation order on a tie). Read only when a child joins a failed batch.
 */
async function earliestFailed(ctx: QueryCtx, firstFailures: readonly Id<"jobs">[]): Promise<Id<"jobs"> | undefined> {
  let earliest: Doc<"jobs"> | null = null;
  for (const id of firstFailures) {
    const job = await ctx.db.get(id);
    if (!job || (job.status !== "dead" && job.status !== "canceled")) continue;
    const [at, earliestAt] = [job.finishedAt ?? Infinity, earliest?.finishedAt ?? Infinity];
    if (!earliest || at < earliestAt || (at === earliestAt && job._creationTime < earliest._creationTime)) earliest = job;
  }
  // none still failed (retried since): name a shard's first failure, as before, so the child is still canceled
  return earliest?._id ?? firstFailures[0];
}

/** The row of the shard `jobId` is counted in, made when missing; null when the batch has no row at all and `make` is false. */
async function shardRow(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string, jobId: Id<"jobs">, make: boolean) {
  const shard = batchShardOf(jobId);
  const row = await ctx.db
    .query("batches")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId).eq("shard", shard))
    .unique();
  if (row) return row;
  if (!make && !(await ctx.db.query("batches").withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId)).first())) return null;
  const id = await ctx.db.insert("batches", { orgId, batchId, shard, unfinished: 0, succeeded: 0, failed: 0 });
  return (await ctx.db.get(id))!;
}

export type ResolvedParents = {
  dependsOn: { jobs?: Id<"jobs">[]; batch?: string };
  // parents not yet met: the job ids (`waitingJobs`: those that wait themselves), and the batch when it has jobs not yet ended
  unmetJobs: Id<"jobs">[];
  waitingJobs: Id<"jobs">[];
  unmetBatch: boolean;
  // a parent that already ended dead or canceled: the child is canceled at once
  failedParent?: Id<"jobs">;
  // results it would read are gone (its batch's succeeded jobs purged): the child fails with inputs_gone at once
  inputsGone?: string;
};

/** The parents must exist in the child's org now, so the graph has no cycles by construction. */
export async function resolveParents(ctx: MutationCtx, orgId: Id<"orgs">, spec: CheckedDependsOn, ownBatch?: string): Promise<ResolvedParents> {
  const ids: Id<"jobs">[] = [];
  const unmetJobs: Id<"jobs">[] = [];
  const waitingJobs: Id<"jobs">[] = [];
  let failedParent: Id<"jobs"> | undefined;
  for (const [i, raw] of spec.jobs.entries()) {
    const id = ctx.db.normalizeId("jobs", raw);
    const parent = id ? await ctx.db.get(id) : null;
    if (!parent || parent.orgId !== orgId) fail("not_found", `dependsOn.jobs[${i}]: no such job ${JSON.stringify(raw.slice(0, 40))}`);
    ids.push(parent._id);
    if (parent.status === "dead" || parent.status === "canceled") failedParent ??= parent._id;
    else if (parent.status !== "succeeded") unmetJobs.push(parent._id);
    if (parent.status === "waiting") waitingJobs.push(parent._id);
  }
  let unmetBatch = false;
  let inputsGone: string | null = null;
  if (spec.batch !== undefined) {
    if (spec.batch === ownBatch) fail("invalid_argument", "A job cannot depend on its own batch");
    const batch = await batchTotals(ctx, orgId, spec.batch);
    if (!batch) fail("not_found", `dependsOn.batch: no batch ${JSON.stringify(spec.batch.slice(0, 40))} in this org`);
    if (batch.failed > 0) failedParent ??= await earliestFailed(ctx, batch.firstFailures);
    unmetBatch = batch.unfinished > 0 || awaitsSeal(await sealOf(ctx, orgId, spec.batch));
    inputsGone = batchInputsGone(spec.batch, batch);
  }
  return {
    dependsOn: { ...(ids.length ? { jobs: ids } : {}), ...(spec.batch !== undefined ? { batch: spec.batch } : {}) },
    unmetJobs,
    waitingJobs,
    unmetBatch,
    failedParent,
    ...(inputsGone !== null ? { inputsGone } : {}),
  };
}

/** Record the unmet edges of a child just inserted as waiting (`childBatch`: the batch it joined). */
export async function insertEdges(ctx: MutationCtx, orgId: Id<"orgs">, childId: Id<"jobs">, parents: ResolvedParents, childBatch: string | undefined) {
  const mine = childBatch !== undefined ? { childBatch } : {};
  for (const parentId of parents.unmetJobs) {
    const via = edgeVia({ jobId: parentId, waiting: parents.waitingJobs.includes(parentId) });
    await ctx.db.insert("jobDependencies", { orgId, childId, parentId, ...mine, ...(via !== undefined ? { via } : {}) });
  }
  const batchId = parents.dependsOn.batch;
  if (parents.unmetBatch && batchId !== undefined) await ctx.db.insert("jobDependencies", { orgId, childId, batchId, ...mine, via: edgeVia({ batchId }) });
}

/** A job that joins `batchId` must not close a cycle through it (pipelines/dependencyCycles.ts). */
export async function checkNoCycle(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string, parents: ResolvedParents) {
  const batch = parents.unmetBatch ? parents.dependsOn.batch : undefined;
  if (parents.waitingJobs.length === 0 && batch === undefined) return;
  await refuseCycle(ctx, orgId, batchId, { waitingJobs: parents.waitingJobs, ...(batch !== undefined ? { batch } : {}) });
}

export function unmetCount(parents: ResolvedParents): number {
  return parents.unmetJobs.length + (parents.unmetBatch ? 1 : 0);
}

/** A job joins its batch (at submit): the batch's children now wait for it too. */
export async function noteBatchJobAdded(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string | undefined, jobId: Id<"jobs">) {
  if (batchId === undefined) return;
  await refuseIfSealed(ctx, orgId, batchId);
  const shard = (await shardRow(ctx, orgId, batchId, jobId, true))!;
  await ctx.db.patch(shard._id, { unfinished: shard.unfinished + 1 });
}

/** A succeeded job of a batch is purged: a child of the batch submitted later would miss its result. */
export async function noteBatchJobPurged(ctx: MutationCtx, job: Doc<"jobs">) {
  if (job.batchId === undefined || job.status !== "succeeded") return;
  const shard = await shardRow(ctx, job.orgId, job.batchId, job._id, false);
  if (shard) await ctx.db.patch(shard._id, { purged: (shard.purged ?? 0) + 1 });
}

/** Why a dead child cannot be retried: a listed parent or a succeeded job of its batch was purged since; or null. */
export async function retriedInputsGone(ctx: QueryCtx, job: Doc<"jobs">): Promise<string | null> {
  for (const id of job.dependsOn?.jobs ?? []) if (!(await ctx.db.get(id))) return `its parent job ${id} was purged`;
  const batchId = job.dependsOn?.batch;
  return batchId === undefined ? null : batchInputsGone(batchId, await batchTotals(ctx, job.orgId, batchId));
}

/** A dead letter of a batch is retried: it is unfinished again. */
export async function noteBatchJobRetried(ctx: MutationCtx, job: Doc<"jobs">) {
  if (job.batchId === undefined) return;
  const shard = await shardRow(ctx, job.orgId, job.batchId, job._id, false);
  if (shard) await ctx.db.patch(shard._id, { unfinished: shard.unfinished + 1, failed: shard.failed - 1 });
}

/** The code of an app job whose parents' results total more than its stdin may carry (LIMITS.appInputsBytes). */
export const INPUTS_TOO_LARGE = "inputs_too_large";

/**
 * queue/transitions.ts finishJob, passed in so that this module does not import transitions. A job that a settlement
 * ends is `cascaded`: its own children are settled in scheduled pages, never in the page that ended it.
 */
export type Finish = (
  ctx: MutationCtx,
  job: Doc<"jobs">,
  status: FinishedStatus,
  extra: { error: string; detail: string; code: string; failedParent?: Id<"jobs">; cascaded: true },
) => Promise<void>;

/**
 * The one hook of a job's end (queue/transitions.ts finishJob, after the job row is final): its batch's
 * counters, its children's edges, and, for a waiting job that ends (canceled), its own edges.
 * `resultBytes`: the size of the result it ended with (a batch sums them, for its children's inputs).
 * `cascaded`: a settlement page ended it, so its children's first page is scheduled too (pipelines/settlements.ts).
 */
export async function noteJobEnded(ctx: MutationCtx, job: Doc<"jobs">, status: FinishedStatus, finish: Finish, resultBytes = 0, cascaded = false) {
  await deleteParentRefs(ctx, job);
  if (job.status === "waiting") {
    for (const edge of await ctx.db.query("jobDependencies").withIndex("by_child", (q) => q.eq("childId", job._id)).collect()) {
      await ctx.db.delete(edge._id);
    }
  }
  const ok = status === "succeeded";
  await settleFirstPage(ctx, { orgId: job.orgId, parentId: job._id, ok, why: `parent job ${job._id} ended ${status}` }, finish, cascaded);
  if (job.batchId === undefined) return;
  const batchId = job.batchId;
  const shard = await shardRow(ctx, job.orgId, batchId, job._id, false);
  if (!shard) return;
  const unfinished = shard.unfinished - 1;
  await ctx.db.patch(shard._id, {
    unfinished,
    ...(ok
      ? { succeeded: shard.succeeded + 1, resultBytes: (shard.resultBytes ?? 0) + resultBytes }
      : // a shard whose failed jobs were all retried holds a stale first failure: this one is its first now
        { failed: shard.failed + 1, firstFailed: shard.failed > 0 && shard.firstFailed !== undefined ? shard.firstFailed : job._id }),
  });
  // A success while its shard still counts unfinished jobs is not the batch's last: one row read and written.
  // Only a success that empties its shard reads the batch's other shards (at most BATCH_SHARDS small rows).
  if (ok && unfinished > 0) return;
  if (ok) {
    const totals = (await batchTotals(ctx, job.orgId, batchId))!;
    if (totals.unfinished > 0 || totals.failed > 0) return;
    // a batch to be sealed releases its children at its seal (releaseSealedBatch), not before
    if (awaitsSeal(await sealOf(ctx, job.orgId, batchId))) return;
  }
  // the batch's children are read only when it fails or when its last job ends
  const why = ok ? "" : `batch ${JSON.stringify(batchId)}'s job ${job._id} ended ${status}`;
  await settleFirstPage(ctx, { orgId: job.orgId, parentId: job._id, ok, why, batchId }, finish, cascaded);
}

/**
 * A parent just ended: settle its first page of edges here, the rest in scheduled pages; a cascaded end settles
 * nothing here and schedules its first page only when it has an edge at all (one index read).
 */
async function settleFirstPage(ctx: MutationCtx, s: Settlement, finish: Finish, cascaded: boolean) {
  if (cascaded) {
    if (await edgesOf(ctx, s).first()) await armSettlement(ctx, s);
    return;
  }
  if ((await settleEdges(ctx, s, finish)).more) await armSettlement(ctx, s);
}

/**
 * The batch was just sealed: if every job of it has succeeded, its children are released now (the first page here,
 * the rest in scheduled pages), as if its last job had just ended. `finish`: queue/transitions.ts finishJob.
 */
export async function releaseSealedBatch(ctx: MutationCtx, orgId: Id<"orgs">, batchId: string, finish: Finish) {
  const totals = await batchTotals(ctx, orgId, batchId);
  if (!totals || totals.unfinished > 0 || totals.failed > 0) return;
  const last = await ctx.db
    .query("jobs")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
    .order("desc")
    .first();
  if (last) await settleFirstPage(ctx, { orgId, parentId: last._id, ok: true, why: "", batchId }, finish, false);
}

/** The bytes of edges and children one page reads at most. */
const EDGE_PAGE_BYTES = TX_BUDGET.rangeReadBytes / 4;

function edgesOf(ctx: MutationCtx, s: Settlement) {
  return s.batchId === undefined
    ? ctx.db.query("jobDependencies").withIndex("by_parent", (q) => q.eq("parentId", s.parentId))
    : ctx.db.query("jobDependencies").withIndex("by_org_batch", (q) => q.eq("orgId", s.orgId).eq("batchId", s.batchId));
}

/**
 * Settle a page of a parent's edges (`pageSize` rows and EDGE_PAGE_BYTES of edges and children at most): `more` says
 * edges are left for another page. Each edge is deleted as its child is told, in the same transaction, so each child
 * is released (or canceled) once however the pages fall. `ok`: met (a child is released once it has no unmet parent
 * left), else the children are canceled naming `parentId` and `why`. A child ended here is `cascaded`.
 */
export async function settleEdges(ctx: MutationCtx, s: Settlement, finish: Finish, pageSize = EDGES_PER_PAGE): Promise<{ more: boolean }> {
  const edges = await edgesOf(ctx, s).take(pageSize + 1);
  const bytes = new ByteBudget(EDGE_PAGE_BYTES);
  const batches = new BatchCache();
  let settled = 0;
  for (const edge of edges) {
    if (settled === pageSize || bytes.exhausted) break;
    bytes.charge(edge);
    await settleEdge(ctx, edge, s, finish, bytes, batches);
    settled++;
  }
  return { more: settled < edges.length };
}

async function settleEdge(ctx: MutationCtx, edge: Doc<"jobDependencies">, s: Settlement, finish: Finish, bytes: ByteBudget, batches: BatchCache) {
  await ctx.db.delete(edge._id);
  const child = await ctx.db.get(edge.childId);
  if (child) bytes.charge(child);
  if (!child || child.status !== "waiting") return;
  if (!s.ok) return await finish(ctx, child, "canceled", { error: s.why, detail: s.why, code: DEPENDENCY_FAILED, failedParent: s.parentId, cascaded: true });
  const unmet = (child.unmetParents ?? 1) - 1;
  if (unmet > 0) await ctx.db.patch(child._id, { unmetParents: unmet });
  else await releaseChild(ctx, child, finish, batches);
}

/** A batch's totals read once per page: the children a page releases often share their batch. */
class BatchCache {
  private readonly totals = new Map<string, Promise<BatchTotals | null>>();

  of(ctx: QueryCtx, orgId: Id<"orgs">, batchId: string): Promise<BatchTotals | null> {
    let totals = this.totals.get(batchId);
    if (!totals) this.totals.set(batchId, (totals = batchTotals(ctx, orgId, batchId)));
    return totals;
  }
}

/** What an app job's inputs weigh: its listed parents' results and its batch's (summed as they succeeded). */
async function inputBytes(ctx: MutationCtx, child: Doc<"jobs">, batches: BatchCache): Promise<number> {
  let bytes = 0;
  for (const id of child.dependsOn?.jobs ?? []) bytes += (await ctx.db.get(id))?.resultBytes ?? 0;
  const batchId = child.dependsOn?.batch;
  if (batchId !== undefined) bytes += (await batches.of(ctx, child.orgId, batchId))?.resultBytes ?? 0;
  return bytes;
}

/**
 * Every parent has succeeded: the child is pending in the lane of its routing key (found or made again now).
 * A child of a batch whose succeeded jobs were purged meanwhile ends dead (code inputs_gone), and an app job whose
 * inputs would not fit its stdin ends dead too (code inputs_too_large): no retry helps either.
 */
export async function releaseChild(ctx: MutationCtx, child: Doc<"jobs">, finish: Finish, batches = new BatchCache()) {
  const batchId = child.dependsOn?.batch;
  const gone = batchId === undefined ? null : batchInputsGone(batchId, await batches.of(ctx, child.orgId, batchId));
  if (gone) return await finish(ctx, child, "dead", { error: gone, detail: gone, code: INPUTS_GONE, cascaded: true });
  if (child.app) {
    const bytes = await inputBytes(ctx, child, batches);
    if (bytes > LIMITS.appInputsBytes) {
      const why = `its parents' results total ${bytes} bytes; an app's inputs may total ${LIMITS.appInputsBytes}`;
      return await finish(ctx, child, "dead", { error: why, detail: why, code: INPUTS_TOO_LARGE, cascaded: true });
    }
  }
  const lane = await laneFor(ctx, child.orgId, routingCapabilities(child.type, child.requiredCapabilities), classOf(child.requirements), child.app);
  const now = Date.now();
  const delayed = child.availableAt > now;
  await ctx.db.patch(child._id, { laneId: lane._id, status: "pending", queue: delayed ? "delayed" : "ready", unmetParents: undefined, availableAt: Math.max(now, child.availableAt) });
  await bumpLane(ctx, { orgId: child.orgId, laneId: lane._id, clientKeyId: child.clientKeyId, keyCounted: child.keyCounted }, { pending: 1, jobs: moveOf(child, "pending") });
  await recordEvent(ctx, child, "dependencies-met");
  if (delayed) await ctx.scheduler.runAt(child.availableAt, internal.janitor.promote, { jobId: child._id });
  else await kickForJobs(ctx, child.orgId);
}
