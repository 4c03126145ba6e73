import type { Doc } from "../../../convex/_generated/dataModel";
import { METRIC_STATUSES } from "../../../convex/observability/moves";

/**
 * The metrics agree with the jobs: per org, job type, client key and status, the totals (metricCells, and summed
 * per client key in metricClients and per org in metricOrgs) plus the moves not folded yet equal the metered jobs
 * there really are, and no count is negative.
 */
export function checkMetrics(
  jobs: Doc<"jobs">[],
  deltas: Doc<"counterDeltas">[],
  totals: { cells: Doc<"metricCells">[]; clients: Doc<"metricClients">[]; orgs: Doc<"metricOrgs">[] },
): string[] {
  const problems: string[] = [];
  const key = (orgId: string, type: string, client: string | undefined, status: string) => `${orgId}|${type}|${client ?? "-"}|${status}`;
  const clientKey = (orgId: string, client: string | undefined, status: string) => `${orgId}|client ${client ?? "-"}|${status}`;
  const real = new Map<string, number>();
  const realOrg = new Map<string, number>();
  const bump = (map: Map<string, number>, k: string, n: number) => map.set(k, (map.get(k) ?? 0) + n);
  for (const job of jobs) {
    if (!job.metered) continue;
    bump(real, key(job.orgId, job.type, job.clientKeyId, job.status), 1);
    bump(real, clientKey(job.orgId, job.clientKeyId, job.status), 1);
    bump(realOrg, `${job.orgId}|${job.status}`, 1);
  }
  const have = new Map<string, number>();
  const haveOrg = new Map<string, number>();
  for (const row of totals.clients) for (const status of METRIC_STATUSES) bump(have, clientKey(row.orgId, row.clientKeyId, status), row.jobs[status]);
  for (const cell of totals.cells) {
    for (const status of METRIC_STATUSES) {
      if (cell.jobs[status] < 0) problems.push(`metrics: ${cell.type}/${cell.clientKeyId ?? "-"} counts ${cell.jobs[status]} ${status}`);
      bump(have, key(cell.orgId, cell.type, cell.clientKeyId, status), cell.jobs[status]);
    }
  }
  for (const row of totals.orgs) for (const status of METRIC_STATUSES) bump(haveOrg, `${row.orgId}|${status}`, row.jobs[status]);
  for (const d of deltas) {
    for (const m of d.jobs ?? []) {
      if (m.from) {
        bump(have, key(d.orgId, m.type, m.client, m.from), -1);
        bump(have, clientKey(d.orgId, m.client, m.from), -1);
        bump(haveOrg, `${d.orgId}|${m.from}`, -1);
      }
      if (m.to) {
        bump(have, key(d.orgId, m.type, m.client, m.to), 1);
        bump(have, clientKey(d.orgId, m.client, m.to), 1);
        bump(haveOrg, `${d.orgId}|${m.to}`, 1);
      }
    }
  }
  for (const k of new Set([...real.keys(), ...have.keys()])) {
    if ((real.get(k) ?? 0) !== (have.get(k) ?? 0)) problems.push(`metrics: ${k} counts ${have.get(k) ?? 0}, really ${real.get(k) ?? 0}`);
  }
  for (const k of new Set([...realOrg.keys(), ...haveOrg.keys()])) {
    if ((realOrg.get(k) ?? 0) !== (haveOrg.get(k) ?? 0)) problems.push(`metrics: org ${k} counts ${haveOrg.get(k) ?? 0}, really ${realOrg.get(k) ?? 0}`);
  }
  return problems;
}
