import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { ByteBudget, takeWithinBudget } from "../core/budget";

/**
 * Per client key, what the operator's Overview shows: its running and waiting jobs (the summariser's totals,
 * keyShards), its share of the jobs started in the last hour (the minute rows' starts per key), and when its
 * oldest waiting job became ready (read live, one index read per key).
 */

/** Client keys a summary lists at most (the busiest first). */
const KEYS_LISTED = 50;
/**
 * Key totals (keyShards rows, one per key that ever had work, idle ones included) a summary reads: an org's keys
 * past these are left out of the Overview. A row is about 100 bytes, so 1,000 take about 100 KiB; the byte budget
 * only guards against rows growing.
 */
const KEY_TOTALS_READ = 1000;
const KEY_TOTALS_BYTES = 256 * 1024;

type Minute = Pick<Doc<"throughput">, "byKey">;

/** The summary's per-key rows: keys with jobs pending or running, or started in these minutes; busiest first. */
export async function keyCounts(ctx: QueryCtx, orgId: Id<"orgs">, minutes: Minute[]) {
  const started = new Map<Id<"clientKeys">, number>();
  for (const minute of minutes) for (const e of minute.byKey ?? []) started.set(e.clientKeyId, (started.get(e.clientKeyId) ?? 0) + e.started);
  const { rows: totals } = await takeWithinBudget(
    ctx.db.query("keyShards").withIndex("by_org", (q) => q.eq("orgId", orgId)),
    KEY_TOTALS_READ,
    new ByteBudget(KEY_TOTALS_BYTES),
  );
  const rows = new Map<Id<"clientKeys">, { clientKeyId: Id<"clientKeys">; pending: number; running: number; startedLastHour: number }>();
  for (const t of totals) rows.set(t.clientKeyId, { clientKeyId: t.clientKeyId, pending: t.pending, running: t.running, startedLastHour: started.get(t.clientKeyId) ?? 0 });
  for (const [clientKeyId, n] of started) if (!rows.has(clientKeyId)) rows.set(clientKeyId, { clientKeyId, pending: 0, running: 0, startedLastHour: n });
  return [...rows.values()]
    .filter((r) => r.pending > 0 || r.running > 0 || r.startedLastHour > 0)
    .sort((a, b) => b.running + b.pending - (a.running + a.pending) || b.startedLastHour - a.startedLastHour)
    .slice(0, KEYS_LISTED);
}

/** A client key's metric totals (overviewFigures); `name`: the row of jobs without a key. */
type MetricClient = Pick<Doc<"metricClients">, "clientKeyId" | "jobs" | "finished"> & { name?: string };
const NO_ENDS = { succeeded: 0, dead: 0, canceled: 0 };
type KeyRow = {
  clientKeyId: Id<"clientKeys"> | null;
  name: string;
  weight: number | null;
  maxRunning: number | null;
  running: number;
  waiting: number;
  startedLastHour: number;
  shareLastHour: number;
  oldestReadyAt: number | null;
  finished: MetricClient["finished"];
};

/**
 * The Overview's one table of client keys, each key once: the summary's keys with work (name, weight, limit,
 * running and waiting jobs, share of the last hour's starts, oldest wait), then the metrics' busiest keys without
 * work now (`clients`, overviewFigures); each with its jobs ended so far (from the metrics' counters). A row with
 * `clientKeyId` null holds the jobs a host app submitted without a key.
 */
export async function keysOverview(ctx: QueryCtx, summary: Pick<Doc<"summaries">, "clientKeys">, clients: MetricClient[]) {
  const rows = summary.clientKeys ?? [];
  const started = rows.reduce((sum, r) => sum + r.startedLastHour, 0);
  const ends = new Map(clients.map((c) => [c.clientKeyId ?? null, c.finished]));
  // when its oldest waiting job became ready: the console shows how long ago
  const oldestReadyAt = async (clientKeyId: Id<"clientKeys">) =>
    (
      await ctx.db
        .query("jobs")
        .withIndex("by_client_queue", (q) => q.eq("clientKeyId", clientKeyId).eq("queue", "ready"))
        .first()
    )?.availableAt ?? null;
  const out: KeyRow[] = [];
  for (const row of rows) {
    const key = await ctx.db.get(row.clientKeyId);
    if (!key) continue;
    out.push({
      clientKeyId: key._id,
      name: key.name,
      weight: key.weight ?? 1,
      maxRunning: key.maxRunning ?? null,
      running: row.running,
      waiting: row.pending,
      startedLastHour: row.startedLastHour,
      // its share of the jobs the farm started in the last hour (0–1)
      shareLastHour: started > 0 ? row.startedLastHour / started : 0,
      oldestReadyAt: await oldestReadyAt(key._id),
      finished: ends.get(key._id) ?? NO_ENDS,
    });
  }
  const listed = new Set(out.map((r) => r.clientKeyId));
  for (const client of clients) {
    const clientKeyId = client.clientKeyId ?? null;
    if (listed.has(clientKeyId)) continue;
    const key = clientKeyId === null ? null : await ctx.db.get(clientKeyId);
    if (clientKeyId !== null && !key) continue;
    out.push({
      clientKeyId,
      name: key?.name ?? client.name ?? "none",
      // no weight for jobs without a key: they take no turn among the keys
      weight: key ? (key.weight ?? 1) : null,
      maxRunning: key?.maxRunning ?? null,
      running: client.jobs.running,
      waiting: client.jobs.pending,
      startedLastHour: 0,
      shareLastHour: 0,
      oldestReadyAt: key && client.jobs.pending > 0 ? await oldestReadyAt(key._id) : null,
      finished: client.finished,
    });
  }
  return out;
}
