import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget } from "../core/budget";
import { kickForJobs, kickSummary } from "./kick";
import { noteKeyEnded } from "./keyRunning";
import { foldMetrics, rowsTouched, addHistograms, bucketOf, emptyHistogram, isCurrentLayout, type JobMove, addRun } from "../observability/entry";

/**
 * Counters without hot documents. A transition never reads a counter: it only inserts a small
 * `counterDeltas` row (an insert conflicts with nobody). The summariser, the only writer of the totals,
 * folds the deltas older than a second into one total row per lane (`laneShards`, shard 0), per org
 * (`orgShards`, shard 0) and per minute (`throughput`, shard 0), and the metrics' totals (observability/fold.ts), and
 * deletes them. Totals from older versions, spread over several shards, are still summed. What a transition tells
 * the metrics rides on the change it inserts anyway (`jobs`, the moved jobs, and other events): no write of its own.
 */

export type FinishedStatus = "succeeded" | "canceled" | "dead";

/** Deltas younger than this are left for the next fold, so a fold never reads a range that inserts land in. */
export const FOLD_AGE_MS = 500;
/** Deltas folded per transaction, at most: fewer when they hold many moved jobs (bytes) or touch many total rows. */
export const FOLD_BATCH = 4_000;
const FOLD_BYTES = 2 * 1024 * 1024;
/** Metric total rows (cells and types) one fold reads and writes, at most (past the first change's). */
const FOLD_METRIC_ROWS = 600;
const LEGACY_SHARDS = 16;

type Delta = Omit<Doc<"counterDeltas">, "_id" | "_creationTime" | "orgId">;
/** What a change tells the metrics besides the counts: the jobs it moved, and other events. */
export type MetricsPart = Pick<Delta, "jobs" | "retries" | "cacheHits" | "leaseExpiries" | "offerExpiries" | "rearmed" | "verdicts" | "webhook">;

async function addDelta(ctx: MutationCtx, orgId: Id<"orgs">, delta: Delta) {
  const { jobs, ...rest } = delta;
  await ctx.db.insert("counterDeltas", { orgId, ...rest, ...(jobs && jobs.length > 0 ? { jobs } : {}) });
}

const METRIC_FIELDS = ["jobs", "retries", "cacheHits", "leaseExpiries", "offerExpiries", "rearmed", "verdicts", "webhook"] as const satisfies ReadonlyArray<keyof MetricsPart>;

/** Does this change tell the metrics anything (so it must be folded, even when its lane is gone)? */
export function carriesMetrics(delta: MetricsPart): boolean {
  return METRIC_FIELDS.some((field) => delta[field] !== undefined);
}

/** A change of the metrics alone (a waiting job's submit, a re-armed loop, a webhook attempt): one insert, if any. */
export async function noteMetrics(ctx: MutationCtx, orgId: Id<"orgs">, metrics: MetricsPart): Promise<void> {
  const { jobs, ...events } = metrics;
  const change = jobs && jobs.length > 0 ? metrics : events;
  if (!carriesMetrics(change)) return;
  await addDelta(ctx, orgId, change);
  await kickSummary(ctx, orgId);
}

export async function createOrgShards(ctx: MutationCtx, orgId: Id<"orgs">) {
  await ctx.db.insert("orgShards", { orgId, shard: 0, succeeded: 0, canceled: 0, dead: 0 });
}

export async function createLaneShards(ctx: MutationCtx, orgId: Id<"orgs">, laneId: Id<"lanes">) {
  await ctx.db.insert("laneShards", { orgId, laneId, shard: 0, pending: 0, running: 0 });
}

/**
 * Change a lane's pending/running counts (and its client key's, for a job its key counts: `keyCounted`), and tell the
 * metrics what moved with it; `runMs`: a run of it returned a result after that long (observability/runTimes.ts). A running job
 * or instance of a key with a maxRunning that stops counting (`running` below 0) also counts down the key's running
 * jobs (lanes/keyRunning.ts) and wakes the dispatcher (jobs of the key may wait for that slot); `moved`: it goes on
 * running elsewhere (an offer turned into an instance, a job moved to another lane), no slot of its key is freed.
 * Starts are counted against the key by whoever hands the job out (queue/fairRound.ts).
 */
export async function bumpLane(
  ctx: MutationCtx,
  job: Pick<Doc<"jobs">, "orgId" | "laneId" | "clientKeyId" | "keyCounted">,
  delta: { pending?: number; running?: number; runMs?: number } & MetricsPart,
  options: { moved?: boolean } = {},
) {
  const clientKeyId = job.keyCounted ? job.clientKeyId : undefined;
  await addDelta(ctx, job.orgId, { laneId: job.laneId, ...delta, ...(clientKeyId ? { clientKeyId } : {}) });
  if (clientKeyId && (delta.running ?? 0) < 0 && !options.moved && (await ctx.db.get(clientKeyId))?.maxRunning !== undefined) {
    await noteKeyEnded(ctx, job.orgId, clientKeyId, -delta.running!);
    await kickForJobs(ctx, job.orgId);
  }
}

/** Count a finished status and, for a new finish, the minute's throughput (and tell the metrics what moved). */
export async function bumpFinished(
  ctx: MutationCtx,
  orgId: Id<"orgs">,
  status: FinishedStatus,
  delta: number,
  now?: number,
  metrics: MetricsPart = {},
) {
  const counted = now !== undefined && delta > 0;
  await addDelta(ctx, orgId, {
    [status]: delta,
    ...(counted ? { minute: Math.floor(now / 60_000), finished: 1 } : {}),
    ...metrics,
  });
}

/** Count one failed attempt (a fail call or an expired lease) in the minute's throughput; `metrics`: whether it retries, … */
export async function bumpFailed(ctx: MutationCtx, orgId: Id<"orgs">, now: number, metrics: MetricsPart = {}) {
  await addDelta(ctx, orgId, { minute: Math.floor(now / 60_000), failed: 1, ...metrics });
}

/**
 * One job (or instance) a claim started: its queue wait (claim time − ready time), its move for the metrics (with the
 * wait), and the client key it counts for.
 */
export type ClaimNote = { waitMs: number; moves: JobMove[]; clientKeyId?: Id<"clientKeys"> };

/**
 * Count one claim call's jobs: their waits in the minute's wait histogram, and their moves: one insert per client key of
 * its jobs (usually one), so each key's starts of the minute are counted too.
 */
export async function noteClaims(ctx: MutationCtx, orgId: Id<"orgs">, now: number, claims: ClaimNote[]) {
  const byKey = new Map<Id<"clientKeys"> | undefined, ClaimNote[]>();
  for (const c of claims) byKey.set(c.clientKeyId, [...(byKey.get(c.clientKeyId) ?? []), c]);
  for (const [clientKeyId, notes] of byKey) {
    const waits = emptyHistogram();
    for (const c of notes) waits[bucketOf(c.waitMs)]++;
    await addDelta(ctx, orgId, { minute: Math.floor(now / 60_000), waits, jobs: notes.flatMap((c) => c.moves), ...(clientKeyId ? { clientKeyId } : {}) });
  }
}

/** Count one attempt's energy (joules) toward its job type's total: one insert. */
export async function bumpTypeEnergy(ctx: MutationCtx, orgId: Id<"orgs">, type: string, energyJ: number) {
  await addDelta(ctx, orgId, { type, energyJ });
}

/**
 * Job types whose energy one fold adds up, at most: each is a write of its own, so a batch of deltas spread over many
 * types (a client submitting thousands of types) stays under the transaction's write limit; the rest wait for the
 * next fold.
 */
export const FOLD_TYPES = 500;

/**
 * Fold the org's deltas older than FOLD_AGE_MS (as of `now`) into the totals (the summariser's job).
 * Returns true when a full batch was folded (or a batch stopped at FOLD_TYPES), so more may be left and the caller runs again.
 */
export async function foldDeltas(ctx: MutationCtx, orgId: Id<"orgs">, now: number): Promise<boolean> {
  const read = await takeWithinBudget(
    ctx.db
      .query("counterDeltas")
      .withIndex("by_org", (q) => (Number.isFinite(now) ? q.eq("orgId", orgId).lt("_creationTime", now - FOLD_AGE_MS) : q.eq("orgId", orgId))),
    FOLD_BATCH,
    new ByteBudget(FOLD_BYTES),
  );
  const deltas = withinRows(read.rows);
  const lanes = new Map<Id<"lanes">, { pending: number; running: number; runs?: number[] }>();
  const keys = new Map<Id<"clientKeys">, { pending: number; running: number }>();
  const org = { succeeded: 0, canceled: 0, dead: 0 };
  type Minute = { finished: number; failed: number; waits?: number[]; byKey: Map<Id<"clientKeys">, number> };
  const minutes = new Map<number, Minute>();
  const energy = new Map<string, { energyJ: number; reports: number }>();
  let typesFull = false;
  // the changes this fold adds up and deletes: only those go to the metrics too
  const folded: typeof deltas = [];
  for (const d of deltas) {
    if (d.type !== undefined && !energy.has(d.type) && energy.size >= FOLD_TYPES) {
      typesFull = true;
      break;
    }
    folded.push(d);
    if (d.type !== undefined) {
      const e = energy.get(d.type) ?? { energyJ: 0, reports: 0 };
      e.energyJ += d.energyJ ?? 0;
      e.reports += 1;
      energy.set(d.type, e);
    }
    if (d.laneId) {
      const t = lanes.get(d.laneId) ?? { pending: 0, running: 0 };
      t.pending += d.pending ?? 0;
      t.running += d.running ?? 0;
      if (d.runMs !== undefined) t.runs = [...(t.runs ?? []), d.runMs];
      lanes.set(d.laneId, t);
    }
    if (d.clientKeyId && (d.pending !== undefined || d.running !== undefined)) {
      const t = keys.get(d.clientKeyId) ?? { pending: 0, running: 0 };
      t.pending += d.pending ?? 0;
      t.running += d.running ?? 0;
      keys.set(d.clientKeyId, t);
    }
    org.succeeded += d.succeeded ?? 0;
    org.canceled += d.canceled ?? 0;
    org.dead += d.dead ?? 0;
    if (d.minute !== undefined) {
      const m: Minute = minutes.get(d.minute) ?? { finished: 0, failed: 0, byKey: new Map() };
      m.finished += d.finished ?? 0;
      m.failed += d.failed ?? 0;
      if (isCurrentLayout(d.waits)) m.waits = addHistograms(m.waits, d.waits);
      if (d.waits !== undefined && d.clientKeyId) m.byKey.set(d.clientKeyId, (m.byKey.get(d.clientKeyId) ?? 0) + d.waits.reduce((a, b) => a + b, 0));
      minutes.set(d.minute, m);
    }
    await ctx.db.delete(d._id);
  }
  for (const [laneId, t] of lanes) {
    const row = await ctx.db
      .query("laneShards")
      .withIndex("by_lane_shard", (q) => q.eq("laneId", laneId).eq("shard", 0))
      .unique();
    const runMs = t.runs ? { runMs: t.runs.reduce<number[] | undefined>((h, ms) => addRun(h, ms), row?.runMs) } : {};
    if (row) await ctx.db.patch(row._id, { pending: row.pending + t.pending, running: row.running + t.running, ...runMs });
    else await ctx.db.insert("laneShards", { orgId, laneId, shard: 0, pending: t.pending, running: t.running, ...runMs });
  }
  for (const [clientKeyId, t] of keys) {
    const row = await ctx.db
      .query("keyShards")
      .withIndex("by_client", (q) => q.eq("clientKeyId", clientKeyId))
      .unique();
    if (row) await ctx.db.patch(row._id, { pending: row.pending + t.pending, running: row.running + t.running });
    else await ctx.db.insert("keyShards", { orgId, clientKeyId, ...t });
  }
  if (org.succeeded || org.canceled || org.dead) {
    const row = await ctx.db
      .query("orgShards")
      .withIndex("by_org_shard", (q) => q.eq("orgId", orgId).eq("shard", 0))
      .unique();
    if (row) {
      await ctx.db.patch(row._id, { succeeded: row.succeeded + org.succeeded, canceled: row.canceled + org.canceled, dead: row.dead + org.dead });
    } else {
      await ctx.db.insert("orgShards", { orgId, shard: 0, ...org });
    }
  }
  for (const [minute, m] of minutes) {
    const row = await ctx.db
      .query("throughput")
      .withIndex("by_org_minute_shard", (q) => q.eq("orgId", orgId).eq("minute", minute).eq("shard", 0))
      .unique();
    const waits = m.waits ? { waits: addHistograms(isCurrentLayout(row?.waits) ? row.waits : undefined, m.waits) } : {};
    const byKey = m.byKey.size > 0 ? { byKey: addStarts(row?.byKey, m.byKey) } : {};
    if (row) await ctx.db.patch(row._id, { finished: row.finished + m.finished, failed: (row.failed ?? 0) + m.failed, ...waits, ...byKey });
    else await ctx.db.insert("throughput", { orgId, minute, shard: 0, finished: m.finished, failed: m.failed, ...waits, ...byKey });
  }
  for (const [type, e] of energy) {
    const row = await ctx.db
      .query("typeEnergy")
      .withIndex("by_org_type", (q) => q.eq("orgId", orgId).eq("type", type))
      .unique();
    if (row) await ctx.db.patch(row._id, { energyJ: row.energyJ + e.energyJ, reports: row.reports + e.reports });
    else await ctx.db.insert("typeEnergy", { orgId, type, ...e });
  }
  await foldMetrics(ctx, orgId, folded, Number.isFinite(now) ? now : Date.now());
  return typesFull || deltas.length < read.rows.length || read.cut || read.rows.length === FOLD_BATCH;
}

/** The changes, in order, up to the one past which the metric rows they touch would be too many for one fold. */
function withinRows<T extends Pick<Doc<"counterDeltas">, "jobs">>(deltas: T[]): T[] {
  const touched = new Set<string>();
  for (let i = 0; i < deltas.length; i++) {
    const rows = rowsTouched(deltas[i]);
    const fresh = rows.filter((r) => !touched.has(r));
    if (i > 0 && touched.size + new Set(fresh).size > FOLD_METRIC_ROWS) return deltas.slice(0, i);
    for (const r of fresh) touched.add(r);
  }
  return deltas;
}

type KeyStarts = NonNullable<Doc<"throughput">["byKey"]>;

/** A minute's starts per client key plus more of them. */
function addStarts(row: KeyStarts | undefined, more: Map<Id<"clientKeys">, number>): KeyStarts {
  const sums = new Map((row ?? []).map((e) => [e.clientKeyId, e.started]));
  for (const [clientKeyId, n] of more) sums.set(clientKeyId, (sums.get(clientKeyId) ?? 0) + n);
  return [...sums].map(([clientKeyId, started]) => ({ clientKeyId, started }));
}

/** Are any of the org's counter changes not folded yet? (Reads up to the first one only.) */
export async function hasDeltas(ctx: QueryCtx, orgId: Id<"orgs">): Promise<boolean> {
  return (await ctx.db.query("counterDeltas").withIndex("by_org", (q) => q.eq("orgId", orgId)).first()) !== null;
}

/** A lane's deltas not folded yet (the maintenance pass adds them to the totals before judging a lane empty). */
export async function unfoldedLaneCounts(ctx: QueryCtx, laneId: Id<"lanes">, limit: number) {
  const rows = await ctx.db
    .query("counterDeltas")
    .withIndex("by_lane", (q) => q.eq("laneId", laneId))
    .take(limit + 1);
  return {
    pending: rows.reduce((s, d) => s + (d.pending ?? 0), 0),
    running: rows.reduce((s, d) => s + (d.running ?? 0), 0),
    complete: rows.length <= limit,
  };
}

export async function orgTotals(ctx: QueryCtx, orgId: Id<"orgs">) {
  const totals = { succeeded: 0, canceled: 0, dead: 0 };
  const rows = await ctx.db
    .query("orgShards")
    .withIndex("by_org_shard", (q) => q.eq("orgId", orgId))
    .take(LEGACY_SHARDS);
  for (const row of rows) {
    totals.succeeded += row.succeeded;
    totals.canceled += row.canceled;
    totals.dead += row.dead;
  }
  return totals;
}

/** Pending/running per lane, from the totals (reads about one row per lane). */
export async function laneTotals(ctx: QueryCtx, orgId: Id<"orgs">, maxLanes: number) {
  const rows = await ctx.db
    .query("laneShards")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .take(maxLanes * LEGACY_SHARDS);
  const byLane = new Map<Id<"lanes">, { pending: number; running: number }>();
  for (const row of rows) {
    const t = byLane.get(row.laneId) ?? { pending: 0, running: 0 };
    t.pending += row.pending;
    t.running += row.running;
    byLane.set(row.laneId, t);
  }
  return byLane;
}

/**
 * Jobs finished and attempts failed per minute over the last hour, with the minute's queue-wait histogram and
 * starts per client key when something was claimed (sparse: empty minutes are omitted).
 */
export async function recentThroughput(ctx: QueryCtx, orgId: Id<"orgs">, now: number) {
  const current = Math.floor(now / 60_000);
  const rows = await ctx.db
    .query("throughput")
    .withIndex("by_org_minute_shard", (q) => q.eq("orgId", orgId).gt("minute", current - 60))
    .take(61 * LEGACY_SHARDS);
  const byMinute = new Map<number, { finished: number; failed: number; waits?: number[]; byKey?: KeyStarts }>();
  for (const row of rows) {
    const sum = byMinute.get(row.minute) ?? { finished: 0, failed: 0 };
    sum.finished += row.finished;
    sum.failed += row.failed ?? 0;
    if (isCurrentLayout(row.waits)) sum.waits = addHistograms(sum.waits, row.waits);
    if (row.byKey) sum.byKey = addStarts(sum.byKey, new Map(row.byKey.map((e) => [e.clientKeyId, e.started])));
    byMinute.set(row.minute, sum);
  }
  return [...byMinute]
    .filter(([, sum]) => sum.finished > 0 || sum.failed > 0 || sum.waits !== undefined)
    .sort((a, b) => a[0] - b[0])
    .map(([minute, sum]) => ({ minuteStart: minute * 60_000, ...sum }));
}
