import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { addHistograms, bucketOf } from "./histogram";
import type { JobMove } from "./moves";
import { emptyFinished, emptyJobCounts, emptyOrgEvents, emptyTimes, type FinishedCounts, type Histogram, type JobCounts } from "./rows";

/**
 * Folding the metrics' parts of the counter changes into their totals (metricCells, metricClients, metricTypes,
 * metricOrgs), in the summariser's fold (lanes/counters.ts foldDeltas), which is their only writer: one read and one
 * write per (type, client key), per client key and per type a fold touches, and one for the org, however many jobs
 * moved.
 */

type Delta = Doc<"counterDeltas">;

/** A recent wait counts half as much this much later (the console's recent wait per type). */
export const RECENT_HALF_LIFE_MS = 60 * 60_000;

const cellKey = (type: string, client: Id<"clientKeys"> | undefined) => `${type}\u0000${client ?? ""}`;

/** The total rows a change would touch (its cells, client keys and types): the fold takes changes only while these stay few. */
export function rowsTouched(delta: Pick<Delta, "jobs">): string[] {
  return (delta.jobs ?? []).flatMap((m) => [cellKey(m.type, m.client), `type\u0000${m.type}`, `client\u0000${m.client ?? ""}`]);
}

type CellChange = { type: string; client?: Id<"clientKeys">; moves: number; jobs: JobCounts; finished: FinishedCounts };
type TypeChange = { moves: number; wait: Histogram; run: Histogram };

function countMove(cell: CellChange, m: JobMove): void {
  cell.moves++;
  if (m.from) cell.jobs[m.from]--;
  if (m.to) cell.jobs[m.to]++;
  // an end is counted once, when the job reaches it from a status that is not one
  if ((m.to === "succeeded" || m.to === "dead" || m.to === "canceled") && !isFinal(m.from)) cell.finished[m.to]++;
}

function isFinal(status: JobMove["from"]): boolean {
  return status === "succeeded" || status === "dead" || status === "canceled";
}

function observe(h: Histogram, ms: number): void {
  h.buckets[bucketOf(ms)]++;
  h.sumMs += ms;
  h.count++;
}

const addTimes = (a: Histogram, b: Histogram): Histogram => ({ buckets: addHistograms(a.buckets, b.buckets), sumMs: a.sumMs + b.sumMs, count: a.count + b.count });

function addCounts<T extends Record<string, number>>(a: T, b: T): T {
  return Object.fromEntries(Object.keys(a).map((k) => [k, a[k] + (b[k] ?? 0)])) as T;
}

/** A counts row (a cell's, a client key's) with a change added. */
function withChange(row: { activity: number; jobs: JobCounts; finished: FinishedCounts } | null, change: CellChange) {
  return {
    activity: (row?.activity ?? 0) + change.moves,
    jobs: addCounts(row?.jobs ?? emptyJobCounts(), change.jobs),
    finished: addCounts(row?.finished ?? emptyFinished(), change.finished),
  };
}

/** What the changes add up to, per cell, per client key, per type and for the org. */
function sumChanges(deltas: Delta[]) {
  const cells = new Map<string, CellChange>();
  const clients = new Map<string, CellChange>();
  const types = new Map<string, TypeChange>();
  const events = emptyOrgEvents();
  for (const d of deltas) {
    for (const m of d.jobs ?? []) {
      const key = cellKey(m.type, m.client);
      const cell = cells.get(key) ?? { type: m.type, ...(m.client ? { client: m.client } : {}), moves: 0, jobs: emptyJobCounts(), finished: emptyFinished() };
      countMove(cell, m);
      cells.set(key, cell);
      const client = clients.get(m.client ?? "") ?? { type: "", ...(m.client ? { client: m.client } : {}), moves: 0, jobs: emptyJobCounts(), finished: emptyFinished() };
      countMove(client, m);
      clients.set(m.client ?? "", client);
      const type = types.get(m.type) ?? { moves: 0, wait: emptyTimes(), run: emptyTimes() };
      type.moves++;
      if (m.waitMs !== undefined) observe(type.wait, m.waitMs);
      if (m.runMs !== undefined) observe(type.run, m.runMs);
      types.set(m.type, type);
    }
    events.retries += d.retries ?? 0;
    events.cacheHits += d.cacheHits ?? 0;
    events.leaseExpiries += d.leaseExpiries ?? 0;
    events.offerExpiries += d.offerExpiries ?? 0;
    if (d.rearmed) events.rearms[d.rearmed]++;
    for (const [verdict, n] of Object.entries(d.verdicts ?? {})) events.verdicts[verdict as keyof typeof events.verdicts] += n ?? 0;
    if (d.webhook) events.webhooks[d.webhook]++;
  }
  return { cells, clients, types, events };
}

/** The decayed histogram of recent waits as of `now`, with `added` counted in at full weight. */
function decayed(row: Pick<Doc<"metricTypes">, "recentWait" | "recentAt"> | null, added: readonly number[], now: number): number[] {
  const weight = row ? Math.pow(0.5, Math.max(0, now - row.recentAt) / RECENT_HALF_LIFE_MS) : 0;
  return Array.from({ length: added.length }, (_, i) => (row?.recentWait[i] ?? 0) * weight + added[i]);
}

export async function metricOrgOf(ctx: QueryCtx, orgId: Id<"orgs">): Promise<Doc<"metricOrgs"> | null> {
  return await ctx.db
    .query("metricOrgs")
    .withIndex("by_org", (q) => q.eq("orgId", orgId))
    .unique();
}

/** Add these counter changes' metrics to the org's totals. */
export async function foldMetrics(ctx: MutationCtx, orgId: Id<"orgs">, deltas: Delta[], now: number): Promise<void> {
  const { cells, clients, types, events } = sumChanges(deltas);
  const hasEvents = Object.values(events).some((e) => (typeof e === "number" ? e !== 0 : Object.values(e).some((n) => n !== 0)));
  if (cells.size === 0 && !hasEvents) return;
  let orgJobs = emptyJobCounts();
  let orgFinished = emptyFinished();
  for (const change of cells.values()) {
    const row = await ctx.db
      .query("metricCells")
      .withIndex("by_org_cell", (q) => q.eq("orgId", orgId).eq("type", change.type).eq("clientKeyId", change.client))
      .unique();
    orgJobs = addCounts(orgJobs, change.jobs);
    orgFinished = addCounts(orgFinished, change.finished);
    if (row) await ctx.db.patch(row._id, withChange(row, change));
    else await ctx.db.insert("metricCells", { orgId, type: change.type, ...(change.client ? { clientKeyId: change.client } : {}), ...withChange(null, change) });
  }
  for (const change of clients.values()) {
    const row = await ctx.db
      .query("metricClients")
      .withIndex("by_org_client", (q) => q.eq("orgId", orgId).eq("clientKeyId", change.client))
      .unique();
    if (row) await ctx.db.patch(row._id, withChange(row, change));
    else await ctx.db.insert("metricClients", { orgId, ...(change.client ? { clientKeyId: change.client } : {}), ...withChange(null, change) });
  }
  let orgWait = emptyTimes();
  let orgRun = emptyTimes();
  for (const [type, change] of types) {
    const row = await ctx.db
      .query("metricTypes")
      .withIndex("by_org_type", (q) => q.eq("orgId", orgId).eq("type", type))
      .unique();
    orgWait = addTimes(orgWait, change.wait);
    orgRun = addTimes(orgRun, change.run);
    const recentWait = decayed(row, change.wait.buckets, now);
    if (row) {
      await ctx.db.patch(row._id, { activity: row.activity + change.moves, wait: addTimes(row.wait, change.wait), run: addTimes(row.run, change.run), recentWait, recentAt: now });
    } else {
      await ctx.db.insert("metricTypes", { orgId, type, activity: change.moves, wait: change.wait, run: change.run, recentWait, recentAt: now });
    }
  }
  const org = await metricOrgOf(ctx, orgId);
  const base = org ?? { jobs: emptyJobCounts(), finished: emptyFinished(), wait: emptyTimes(), run: emptyTimes(), ...emptyOrgEvents() };
  const totals = {
    jobs: addCounts(base.jobs, orgJobs),
    finished: addCounts(base.finished, orgFinished),
    wait: addTimes(base.wait, orgWait),
    run: addTimes(base.run, orgRun),
    retries: base.retries + events.retries,
    cacheHits: (base.cacheHits ?? 0) + events.cacheHits,
    leaseExpiries: base.leaseExpiries + events.leaseExpiries,
    offerExpiries: base.offerExpiries + events.offerExpiries,
    rearms: addCounts({ ...emptyOrgEvents().rearms, ...base.rearms }, events.rearms),
    verdicts: addCounts(base.verdicts, events.verdicts),
    webhooks: addCounts(base.webhooks, events.webhooks),
  };
  if (org) await ctx.db.patch(org._id, totals);
  else await ctx.db.insert("metricOrgs", { orgId, ...totals });
}
