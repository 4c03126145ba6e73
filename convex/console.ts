import { paginationOptsValidator } from "convex/server";
import { v } from "convex/values";
import type { Doc, Id } from "./_generated/dataModel";
import { query, type QueryCtx } from "./_generated/server";
import { jobInOrg, operatorFromKey, requireJobInOrg } from "./access/auth";
import { errorOf, payloadOf, resultOf } from "./core/bodies";
import { TX_BUDGET } from "./core/budget";
import { creditTotalOf, orgWeekCredit, topWeekCredit } from "./trust/credit";
import { energyByType } from "./trust/energy";
import { checkJobFilter, jobRow, planJobQuery } from "./queue/jobQuery";
import { overviewFigures } from "./observability/overviewFigures";
import { orgLanes } from "./lanes/lanes";
import { LIMITS, TIMING } from "./core/limits";
import { computeSummary, listsEveryWorker, summaryOf, type Summary } from "./queue/summary";
import { checkIntegerInRange } from "./core/validate";
import { deliveriesOf } from "./webhooks/webhooks";
import { runningCount } from "./lanes/workerSlots";
import { jobFilter } from "./schema";
import { outputPerInstance, validationView } from "./trust/instanceView";
import { consoleTrustOf } from "./trust/validationTrust";
import { waitFields } from "./queue/jobView";
import { laneReason, type WaitContext } from "./queue/waitReasons";
import { APP_TYPE_PREFIX, APPS_CAPABILITY } from "./core/appLimits";
import { keysOverview } from "./observability/keySummary";

/**
 * The operator's console (reads). Every function takes an operator key as `apiKey` (or the key of a worker
 * enrolled with canManage) and sees only that key's org; each reads a bounded number of documents however many
 * jobs there are. None reads the clock: a subscribed query's answer changes only when its data does, so what
 * depends on time (online, how long a job has waited, the last hour) is answered as timestamps and derived by
 * the console as time passes.
 */

const CONSOLE_PAGE_MAX = 100;
const EVENTS_SHOWN = 500;
const OUTPUT_PAGE_CHUNKS = 200;
const OUTPUT_ON_JOB_PAGE = 50;

/**
 * Counts, the workers (each with when it stops counting as online), throughput per minute, queue wait, when the
 * oldest waiting job became ready, the same per client key with its running jobs, share of the last hour and (from
 * the metrics' counters) jobs ended, and the recent wait per job type. The console derives
 * "online" and "waiting for" against its own clock.
 */
export const overview = query({
  args: { apiKey: v.string() },
  handler: async (ctx, { apiKey }) => {
    const me = await operatorFromKey(ctx, apiKey);
    // An org without a summary yet (made before summaries) shows its counts; its throughput once the summariser ran.
    const summary = (await summaryOf(ctx, me.orgId)) ?? (await computeSummary(ctx, me.orgId, 0));
    // The oldest ready job: the head of each lane's ready range by availableAt (one read per lane).
    let oldestReadyAt: number | undefined;
    for (const lane of await orgLanes(ctx, me.orgId)) {
      const head = await ctx.db
        .query("jobs")
        .withIndex("by_lane_delayed", (q) => q.eq("laneId", lane._id).eq("queue", "ready"))
        .first();
      if (head && (oldestReadyAt === undefined || head.availableAt < oldestReadyAt)) oldestReadyAt = head.availableAt;
    }
    const workers = summary.workers.filter((w) => !w.revoked);
    const { clients, ...figures } = await overviewFigures(ctx, me.orgId);
    return {
      counts: summary.counts,
      // online until then, for the workers the summary lists (the most recently seen, so online ones first); one
      // that said it stopped was online until it did
      onlineUntil: workers.map((w) => w.stoppedAt ?? w.lastSeenAt + TIMING.onlineWindowMs),
      // workers online as of refreshedAt beyond those listed (the list holds the first ones of a large farm)
      onlineUnlisted: listsEveryWorker(summary)
        ? 0
        : Math.max(0, summary.workerCounts!.online - workers.filter((w) => w.stoppedAt === undefined && w.lastSeenAt + TIMING.onlineWindowMs > summary.refreshedAt).length),
      workers: listsEveryWorker(summary) ? workers.length : summary.workerCounts!.total,
      throughput: summary.throughput,
      queueWait: summary.queueWait ?? null,
      oldestReadyAt: oldestReadyAt ?? null,
      // per client key with work (the busiest 50), then the busiest 20 with jobs ended: running, waiting, share of
      // the last hour's starts, oldest wait, jobs ended
      clientKeys: await keysOverview(ctx, summary, clients),
      refreshedAt: summary.refreshedAt,
      // lanes with jobs waiting that nothing online can run, with why (the words their jobs give)
      stuck: stuckLanes(summary),
      ...figures,
    };
  },
});

/** The summary's lanes with pending jobs that nothing online can run, and why; `type` when the lane is one job type's. */
function stuckLanes(summary: Summary) {
  return summary.lanes.flatMap((lane) => {
    const why = lane.pending > 0 ? laneReason(lane, summary) : null;
    if (!why) return [];
    const [only] = lane.capabilities;
    // an apps lane is one type's when it holds one app's jobs (of one version or several)
    const appNames = new Set((lane.apps ?? []).map((a) => a.name));
    const oneApp = only === APPS_CAPABILITY && appNames.size === 1 && !lane.moreApps ? `${APP_TYPE_PREFIX}${[...appNames][0]}` : null;
    const type = lane.capabilities.length === 1 ? (only !== APPS_CAPABILITY ? only : oneApp) : null;
    const apps = lane.apps ? { apps: lane.apps, ...(lane.moreApps ? { moreApps: true } : {}) } : {};
    return [{ routingKey: lane.routingKey, capabilities: lane.capabilities, requirements: lane.requirements ?? null, ...apps, pending: lane.pending, type, waitCode: why.code, waitReason: why.reason }];
  });
}

/**
 * One page of jobs, newest first, for a filter. `index` names the index that served it; `checked` lists
 * the filter fields checked on the page itself (no index serves that combination): such a page may hold
 * fewer jobs than asked for, or none, while more match further on — keep paging until `isDone`.
 */
export const jobs = query({
  args: { apiKey: v.string(), filter: jobFilter, paginationOpts: paginationOptsValidator },
  handler: async (ctx, { apiKey, filter, paginationOpts }) => {
    const me = await operatorFromKey(ctx, apiKey);
    const checked = checkJobFilter(filter);
    checkIntegerInRange(paginationOpts.numItems, "numItems", 1, CONSOLE_PAGE_MAX);
    const { query: ordered, plan } = planJobQuery(ctx, me.orgId, checked);
    // a page may end early at the byte budget, with a cursor that continues (isDone false)
    const page = await ordered.paginate({ numItems: paginationOpts.numItems, cursor: paginationOpts.cursor, maximumBytesRead: TX_BUDGET.rangeReadBytes });
    // why each waiting job waits, from one read of the summary row shared by the page
    const farm: WaitContext = { summary: undefined, parentReads: 2 * CONSOLE_PAGE_MAX };
    const rows = [];
    for (const job of page.page.filter(plan.matches)) rows.push({ ...jobRow(job), ...(await waitFields(ctx, job, farm)) });
    return {
      page: rows,
      continueCursor: page.continueCursor,
      isDone: page.isDone,
      index: plan.index,
      checked: plan.checked,
      scanned: page.page.length,
    };
  },
});

/** Everything about one job: the job, its event timeline with the workers named, recent output, webhook attempts. */
export const job = query({
  args: { apiKey: v.string(), jobId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const found = await jobInOrg(ctx, me.orgId, args.jobId);
    if (!found) return null;
    const events = await ctx.db
      .query("jobEvents")
      .withIndex("by_job", (q) => q.eq("jobId", found._id))
      .take(EVENTS_SHOWN + 1);
    const workerIds = new Set<Id<"workers">>(events.flatMap((e) => (e.workerId ? [e.workerId] : [])));
    if (found.workerId) workerIds.add(found.workerId);
    const names = new Map<Id<"workers">, string>();
    for (const id of workerIds) {
      const worker = await ctx.db.get(id);
      if (worker) names.set(id, worker.name);
    }
    const newestOutput = await ctx.db
      .query("jobOutput")
      .withIndex("by_job_seq", (q) => q.eq("jobId", found._id))
      .order("desc")
      .take(OUTPUT_ON_JOB_PAGE);
    const output = newestOutput.reverse();
    // a waiting job's capabilities (its type's first of all) no online worker offers, as the last summary saw them
    const summary = found.status === "pending" ? await summaryOf(ctx, me.orgId) : undefined;
    const lane = summary ? await ctx.db.get(found.laneId) : null;
    const nobodyHandles = (lane && summary?.lanes.find((l) => l.routingKey === lane.routingKey)?.nobodyHandles) ?? [];
    return {
      ...jobRow(found),
      payload: await payloadOf(ctx, found),
      result: await resultOf(ctx, found),
      error: await errorOf(ctx, found),
      statusText: found.statusText,
      requiredCapabilities: found.requiredCapabilities,
      leaseExpiresAt: found.leaseExpiresAt,
      workerName: found.workerId ? names.get(found.workerId) : undefined,
      cpuMs: found.cpuMs,
      cpuMeasured: found.cpuMeasured,
      events: events.slice(0, EVENTS_SHOWN).map((e) => ({
        kind: e.kind,
        at: e.at,
        attempt: e.attempt,
        workerId: e.workerId,
        workerName: e.workerId ? names.get(e.workerId) : undefined,
        detail: e.detail,
        backoffMs: e.backoffMs,
      })),
      eventsTruncated: events.length > EVENTS_SHOWN,
      output: { text: output.map((c) => c.chunk).join(""), fromSeq: output[0]?.seq ?? 0, nextSeq: (newestOutput[0]?.seq ?? -1) + 1 },
      webhook: await deliveriesOf(ctx, found._id),
      nobodyHandles,
      // a cache hit: the job whose result it took; cacheable: its type's entries may be dropped from its page
      cachedFrom: found.cachedFrom,
      cacheWaitsOn: found.cacheWaitsOn,
      cacheable: found.cache !== undefined,
      // whose share and limits it counts against, and, pending beyond its turn, why
      countsAgainst: await countsAgainst(ctx, found),
      ...(await waitFields(ctx, found, { summary })),
      // dependencies: why it ended (dependency_failed names the parent) and, while waiting, how many parents it waits for
      ...(found.errorCode !== undefined ? { errorCode: found.errorCode } : {}),
      ...(found.failedParent !== undefined ? { failedParent: found.failedParent } : {}),
      ...(found.unmetParents !== undefined ? { unmetParents: found.unmetParents } : {}),
      // a replicated job's instances (issue 20); "single" for a job that runs once
      validation: await validationView(ctx, found),
      // and its output, one section per instance that wrote it (of the chunks shown)
      ...(found.validation ? { outputs: await outputPerInstance(ctx, output) } : {}),
    };
  },
});

/** The client key a job counts against (its weight and limit) and its fairness key; null for a host app's own job. */
async function countsAgainst(ctx: QueryCtx, job: Doc<"jobs">) {
  const key = job.clientKeyId ? await ctx.db.get(job.clientKeyId) : null;
  if (!key) return null;
  return { clientKeyId: key._id, name: key.name, weight: key.weight ?? 1, maxRunning: key.maxRunning ?? null, fairnessKey: job.fairnessKey ?? null };
}

/** A job's output from chunk `fromSeq` on, at most 200 chunks per call; `nextSeq` continues it. */
export const jobOutput = query({
  args: { apiKey: v.string(), jobId: v.string(), fromSeq: v.optional(v.number()) },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const fromSeq = checkIntegerInRange(args.fromSeq ?? 0, "fromSeq", 0, LIMITS.outputChunksPerJob);
    const found = await requireJobInOrg(ctx, me.orgId, args.jobId);
    const chunks = await ctx.db
      .query("jobOutput")
      .withIndex("by_job_seq", (q) => q.eq("jobId", found._id).gte("seq", fromSeq))
      .take(OUTPUT_PAGE_CHUNKS + 1);
    const shown = chunks.slice(0, OUTPUT_PAGE_CHUNKS);
    return {
      text: shown.map((c) => c.chunk).join(""),
      nextSeq: shown.length > 0 ? shown[shown.length - 1].seq + 1 : fromSeq,
      more: chunks.length > OUTPUT_PAGE_CHUNKS,
    };
  },
});

/** Workers per console:workers page, at most. */
const WORKERS_PAGE_MAX = 100;

/**
 * The org's workers, a page at a time, most recently seen first (so online ones first; revoked workers are
 * not listed): online state, last seen, capabilities, slots in use, jobs done and CPU time given. A page may
 * hold fewer rows than asked while `isDone` is false (a worker revoked meanwhile); `continueCursor` goes on.
 */
export const workers = query({
  args: { apiKey: v.string(), paginationOpts: v.optional(paginationOptsValidator) },
  handler: async (ctx, { apiKey, paginationOpts }) => {
    const me = await operatorFromKey(ctx, apiKey);
    const opts = paginationOpts ?? { numItems: WORKERS_PAGE_MAX, cursor: null };
    checkIntegerInRange(opts.numItems, "numItems", 1, WORKERS_PAGE_MAX);
    const seen = await ctx.db
      .query("presence")
      .withIndex("by_org_seen", (q) => q.eq("orgId", me.orgId))
      .order("desc")
      .paginate({ numItems: opts.numItems, cursor: opts.cursor });
    const page = [];
    for (const { workerId, lastSeenAt, stoppedAt } of seen.page) {
      const w = await ctx.db.get(workerId);
      if (!w || w.revoked) continue;
      const c = await creditTotalOf(ctx, w._id);
      page.push({
        workerId: w._id,
        name: w.name,
        machineId: w.machineId,
        keyPrefix: w.keyPrefix,
        revoked: w.revoked,
        canManage: w.canManage,
        isMe: me.kind === "worker" && w._id === me.workerId,
        // online until then (a revoked worker never is): the console compares it with its clock
        onlineUntil: w.revoked ? null : (stoppedAt ?? lastSeenAt + TIMING.onlineWindowMs),
        lastSeenAt,
        allowedCapabilities: w.allowedCapabilities,
        advertisedCapabilities: w.advertisedCapabilities,
        maxConcurrentJobs: w.maxConcurrentJobs,
        slotsInUse: await runningCount(ctx, w),
        jobsDone: c?.jobs ?? 0,
        attemptsFailed: c?.failed ?? 0,
        cpuMs: c?.cpuMs ?? 0,
        wallMs: c?.wallMs ?? 0,
        // the energy its attempts used (joules), measured or estimated by the worker
        energyJ: c?.energyJ ?? 0,
        // hardware facts, when the worker has reported them
        facts: w.facts ?? null,
        // adaptive trust (issue 20): its lowest streaks per job type and its daily job quota
        trust: await consoleTrustOf(ctx, w),
      });
    }
    return { page, continueCursor: seen.continueCursor, isDone: seen.isDone };
  },
});

/** Workers on each leaderboard (the week's and all time). */
const LEADERBOARD_SHOWN = 50;

/**
 * Who gave most: CPU time per worker in the week that holds `weekOf` (UTC, from Monday 00:00; the console passes
 * the start of its current week and moves it on when the week turns) and all time, most first: the top 50 of each,
 * of every worker.
 */
export const leaderboard = query({
  args: { apiKey: v.string(), weekOf: v.number() },
  handler: async (ctx, { apiKey, weekOf }) => {
    const me = await operatorFromKey(ctx, apiKey);
    checkIntegerInRange(weekOf, "weekOf", 0, 8.64e15);
    const week = await topWeekCredit(ctx, me.orgId, weekOf, LEADERBOARD_SHOWN);
    // the top of every worker's total, not the totals of the first workers
    const totals = await ctx.db
      .query("creditTotals")
      .withIndex("by_org_cpu", (q) => q.eq("orgId", me.orgId))
      .order("desc")
      .take(LEADERBOARD_SHOWN);
    const names = new Map<Id<"workers">, string>();
    for (const id of new Set([...week.keys(), ...totals.map((t) => t.workerId)])) {
      names.set(id, (await ctx.db.get(id))?.name ?? "(deleted)");
    }
    const rank = (rows: Array<{ workerId: Id<"workers">; cpuMs: number; wallMs: number; jobs: number; energyJ?: number }>) =>
      rows
        .sort((a, b) => b.cpuMs - a.cpuMs)
        .map((r) => ({ workerId: r.workerId, name: names.get(r.workerId)!, cpuMs: r.cpuMs, wallMs: r.wallMs, jobs: r.jobs, energyJ: r.energyJ ?? 0 }));
    return {
      week: rank([...week].map(([workerId, t]) => ({ workerId, ...t }))),
      allTime: rank(totals.map((t) => ({ ...t }))),
    };
  },
});

/** Job types and donors the energy section shows, at most. */
const ENERGY_ROWS = 20;

/**
 * Energy given (joules, as the donors measured or estimated it): per job type all time (most first), and per donor in
 * the week that holds `weekOf` (UTC, from Monday 00:00; the console passes the start of its current week), most first.
 */
export const energy = query({
  args: { apiKey: v.string(), weekOf: v.number() },
  handler: async (ctx, { apiKey, weekOf }) => {
    const me = await operatorFromKey(ctx, apiKey);
    checkIntegerInRange(weekOf, "weekOf", 0, 8.64e15);
    const week = [...(await orgWeekCredit(ctx, me.orgId, weekOf))].filter(([, t]) => t.energyJ > 0).sort((a, b) => b[1].energyJ - a[1].energyJ);
    const donors = [];
    for (const [workerId, t] of week.slice(0, ENERGY_ROWS)) donors.push({ workerId, name: (await ctx.db.get(workerId))?.name ?? "(deleted)", energyJ: t.energyJ, jobs: t.jobs });
    return {
      byType: await energyByType(ctx, me.orgId, ENERGY_ROWS),
      weekByDonor: donors,
      weekTotalJ: week.reduce((s, [, t]) => s + t.energyJ, 0),
    };
  },
});

/** A bulk retry/cancel/purge started from the console: how far it got. */
export const bulkStatus = query({
  args: { apiKey: v.string(), bulkId: v.string() },
  handler: async (ctx, args) => {
    const me = await operatorFromKey(ctx, args.apiKey);
    const id = ctx.db.normalizeId("bulkOps", args.bulkId);
    const op = id ? await ctx.db.get(id) : null;
    if (!op || op.orgId !== me.orgId) return null;
    return {
      bulkId: op._id,
      action: op.action,
      filter: op.filter,
      scanned: op.scanned,
      affected: op.affected,
      batches: op.batches,
      done: op.done,
      startedAt: op.startedAt,
      finishedAt: op.finishedAt,
      // why it ended early (its step kept failing), if it did
      ...(op.error ? { error: op.error } : {}),
    };
  },
});
