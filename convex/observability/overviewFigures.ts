import type { Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { metricOrgOf } from "./fold";
import { quantileMs } from "./histogram";
import { NO_CLIENT } from "./labels";

/**
 * The console overview's figures per job type and per client key, from the metrics' totals (the same counters
 * GET /api/metrics exposes): 41 documents at most, none of them a job.
 */

/** Job types and client keys the overview lists, the busiest first. */
export const LISTED = 20;

export async function overviewFigures(ctx: QueryCtx, orgId: Id<"orgs">) {
  const types = await ctx.db
    .query("metricTypes")
    .withIndex("by_org_activity", (q) => q.eq("orgId", orgId))
    .order("desc")
    .take(LISTED);
  const clients = await ctx.db
    .query("metricClients")
    .withIndex("by_org_activity", (q) => q.eq("orgId", orgId))
    .order("desc")
    .take(LISTED);
  const org = await metricOrgOf(ctx, orgId);
  return {
    // recent waits (each weighs half as much an hour on), so an old backlog fades
    waitsByType: types.map((t) => ({ type: t.type, p50Ms: quantileMs(t.recentWait, 0.5), p95Ms: quantileMs(t.recentWait, 0.95) })),
    // the busiest client keys' jobs and ends, for the Overview's client keys (keysOverview)
    clients: clients.map((c) => ({ clientKeyId: c.clientKeyId, jobs: c.jobs, finished: c.finished, ...(c.clientKeyId ? {} : { name: NO_CLIENT }) })),
    finished: org?.finished ?? { succeeded: 0, dead: 0, canceled: 0 },
    // jobs answered from the result cache (or an identical job in flight) without running: farmhand_cache_hits_total
    cacheHits: org?.cacheHits ?? 0,
  };
}
