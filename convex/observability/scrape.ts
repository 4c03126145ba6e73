import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget } from "../core/budget";
import type { Families, HistogramSeries, Sample } from "./exposition";
import { metricOrgOf } from "./fold";
import { subtractHistograms } from "./histogram";
import { clientLabels, NO_CLIENT, OTHER, TOP_VALUES } from "./labels";
import { METRIC_STATUSES, VERDICTS, WATCHDOG_LOOPS, WEBHOOK_OUTCOMES } from "./moves";
import { emptyFinished, emptyJobCounts, emptyOrgEvents, emptyTimes, type FinishedCounts, type Histogram, type JobCounts } from "./rows";

/**
 * One scrape of an org's metrics, from the totals the summariser keeps (observability/fold.ts) and the lanes' heads:
 * no job is counted here. It reads the org's totals row, its 100 busiest job types and client keys (and those keys'
 * names), its busiest (type, client key) pairs, one head per lane and the summary: at most about 1,700 documents and 1 MiB,
 * however many jobs, types or keys there are. Pairs past the busiest CELLS_READ count under
 * type="other",client="other" (their sum is the org's total less the pairs listed).
 */

export const CELLS_READ = 1_000;
const CELL_BYTES = 320 * 1024;
/** Lane heads read for the oldest ready job (one job row each): past this, types whose lane is further on show 0. */
const HEAD_BYTES = 256 * 1024;

const FINISHED_OUTCOMES = ["succeeded", "dead", "canceled"] as const;

type Pair = { jobs: JobCounts; finished: FinishedCounts };

function addInto<T extends Record<string, number>>(into: T, add: T, sign = 1): void {
  for (const k of Object.keys(into) as Array<keyof T>) (into[k] as number) += sign * (add[k] as number);
}

const nonZero = (counts: Record<string, number>) => Object.values(counts).some((n) => n !== 0);

/** The job counts and ends of each (type label, client label) pair, the pairs past those read counted as other/other. */
async function pairs(ctx: QueryCtx, orgId: Id<"orgs">, org: Pair, topTypes: ReadonlySet<string>) {
  const { rows: cells } = await takeWithinBudget(
    ctx.db
      .query("metricCells")
      .withIndex("by_org_activity", (q) => q.eq("orgId", orgId))
      .order("desc"),
    CELLS_READ,
    new ByteBudget(CELL_BYTES),
  );
  const clientRows = await ctx.db
    .query("metricClients")
    .withIndex("by_org_activity", (q) => q.eq("orgId", orgId))
    .order("desc")
    .take(TOP_VALUES);
  const topClients = new Set(clientRows.map((c) => c.clientKeyId ?? ""));
  const names = await clientLabels(ctx, [...topClients].filter((id): id is Id<"clientKeys"> => id !== ""));
  const clientLabel = (id: Id<"clientKeys"> | undefined) => (!topClients.has(id ?? "") ? OTHER : id === undefined ? NO_CLIENT : names.get(id)!);
  const byLabels = new Map<string, Pair & { type: string; client: string }>();
  const into = (type: string, client: string) => {
    const key = `${type}\u0000${client}`;
    let pair = byLabels.get(key);
    if (!pair) byLabels.set(key, (pair = { type, client, jobs: emptyJobCounts(), finished: emptyFinished() }));
    return pair;
  };
  const rest: Pair = { jobs: { ...org.jobs }, finished: { ...org.finished } };
  for (const c of cells) {
    const pair = into(topTypes.has(c.type) ? c.type : OTHER, clientLabel(c.clientKeyId));
    addInto(pair.jobs, c.jobs);
    addInto(pair.finished, c.finished);
    addInto(rest.jobs, c.jobs, -1);
    addInto(rest.finished, c.finished, -1);
  }
  if (nonZero(rest.jobs) || nonZero(rest.finished)) {
    const other = into(OTHER, OTHER);
    addInto(other.jobs, rest.jobs);
    addInto(other.finished, rest.finished);
  }
  return [...byLabels.values()];
}

/** Wait and run histograms of the busiest types, and of the rest as `other` (the org's total less theirs). */
function histograms(types: Doc<"metricTypes">[], org: { wait: Histogram; run: Histogram }, more: boolean) {
  const wait: HistogramSeries[] = types.map((t) => ({ labels: { type: t.type }, times: t.wait }));
  const run: HistogramSeries[] = types.map((t) => ({ labels: { type: t.type }, times: t.run }));
  if (more) {
    const rest = (total: Histogram, parts: Histogram[]): Histogram => ({
      buckets: parts.reduce((left, p) => subtractHistograms(left, p.buckets), total.buckets),
      sumMs: Math.max(0, parts.reduce((left, p) => left - p.sumMs, total.sumMs)),
      count: Math.max(0, parts.reduce((left, p) => left - p.count, total.count)),
    });
    wait.push({ labels: { type: OTHER }, times: rest(org.wait, types.map((t) => t.wait)) });
    run.push({ labels: { type: OTHER }, times: rest(org.run, types.map((t) => t.run)) });
  }
  return { wait, run };
}

/** The age of the oldest ready job per type label, from each lane's head by readiness (one job read per lane). */
async function oldestReady(ctx: QueryCtx, lanes: readonly Doc<"lanes">[], topTypes: ReadonlySet<string>, now: number): Promise<Sample[]> {
  const ages = new Map<string, number>([...topTypes].map((t) => [t, 0]));
  const bytes = new ByteBudget(HEAD_BYTES);
  for (const lane of lanes) {
    if (bytes.exhausted) break;
    const head = await ctx.db
      .query("jobs")
      .withIndex("by_lane_delayed", (q) => q.eq("laneId", lane._id).eq("queue", "ready"))
      .first();
    if (!head) continue;
    bytes.charge(head);
    const type = topTypes.has(head.type) ? head.type : OTHER;
    ages.set(type, Math.max(ages.get(type) ?? 0, Math.max(0, now - head.availableAt) / 1000));
  }
  return [...ages].map(([type, age]) => ({ labels: { type }, value: age }));
}

/** What the queue holds for the scrape, read by its caller (the queue's tables are not observability's to read). */
export interface QueueState { lanes: readonly Doc<"lanes">[]; summary: Doc<"summaries"> | null }

export async function scrapeOrg(ctx: QueryCtx, orgId: Id<"orgs">, queue: QueueState, now: number): Promise<Families> {
  const orgRow = await metricOrgOf(ctx, orgId);
  const org = orgRow ?? { jobs: emptyJobCounts(), finished: emptyFinished(), wait: emptyTimes(), run: emptyTimes(), ...emptyOrgEvents() };
  const typeRows = await ctx.db
    .query("metricTypes")
    .withIndex("by_org_activity", (q) => q.eq("orgId", orgId))
    .order("desc")
    .take(TOP_VALUES + 1);
  const types = typeRows.slice(0, TOP_VALUES);
  const topTypes = new Set(types.map((t) => t.type));
  const jobs: Sample[] = [];
  const finished: Sample[] = [];
  for (const p of await pairs(ctx, orgId, org, topTypes)) {
    for (const status of METRIC_STATUSES) jobs.push({ labels: { status, type: p.type, client: p.client }, value: p.jobs[status] });
    for (const outcome of FINISHED_OUTCOMES) finished.push({ labels: { type: p.type, client: p.client, outcome }, value: p.finished[outcome] });
  }
  const { wait, run } = histograms(types, org, typeRows.length > TOP_VALUES);
  const { summary } = queue;
  const states = summary?.workerStates ?? { idle: 0, busy: 0, suspended: 0, paused: 0, offline: summary?.workerCounts?.total ?? 0 };
  const slots = summary?.slotStates ?? { free: 0, busy: 0 };
  const counts = <K extends string>(label: string, keys: readonly K[], values: Record<K, number>): Sample[] => keys.map((k) => ({ labels: { [label]: k }, value: values[k] }));
  return {
    farmhand_jobs: jobs,
    farmhand_queue_oldest_ready_age_seconds: await oldestReady(ctx, queue.lanes, topTypes, now),
    farmhand_jobs_finished_total: finished,
    farmhand_job_wait_seconds: wait,
    farmhand_job_run_seconds: run,
    farmhand_workers: counts("state", ["idle", "busy", "suspended", "paused", "offline"] as const, states),
    farmhand_slots: counts("state", ["free", "busy"] as const, slots),
    farmhand_retries_total: [{ labels: {}, value: org.retries }],
    farmhand_cache_hits_total: [{ labels: {}, value: org.cacheHits ?? 0 }],
    farmhand_lease_expiries_total: [{ labels: {}, value: org.leaseExpiries }],
    farmhand_offer_expiries_total: [{ labels: {}, value: org.offerExpiries }],
    farmhand_watchdog_rearms_total: counts("loop", WATCHDOG_LOOPS, { ...emptyOrgEvents().rearms, ...org.rearms }),
    farmhand_replicated_results_total: counts("verdict", VERDICTS, org.verdicts),
    farmhand_webhook_deliveries_total: counts("outcome", WEBHOOK_OUTCOMES, org.webhooks),
    farmhand_metrics_updated_timestamp_seconds: [{ labels: {}, value: (summary?.refreshedAt ?? 0) / 1000 }],
  };
}
