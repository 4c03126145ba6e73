import type { Doc } from "../../../convex/_generated/dataModel";

/** The rows of fair share and per-key limits the consistency check reads (convex/queue/fairRound.ts, keyRunning.ts). */
export type FairTables = {
  orgs: Doc<"orgs">[];
  lanes: Doc<"lanes">[];
  jobs: Doc<"jobs">[];
  instances: Doc<"jobInstances">[];
  clientKeys: Doc<"clientKeys">[];
  counterDeltas: Doc<"counterDeltas">[];
  keyShards: Doc<"keyShards">[];
  keyRunning: Doc<"keyRunning">[];
  keyRunningDeltas: Doc<"keyRunningDeltas">[];
  fairPasses: Doc<"fairPasses">[];
  fairClocks: Doc<"fairClocks">[];
  fairCursors: Doc<"fairCursors">[];
  fairnessWeights: Doc<"fairnessWeights">[];
};

function add(map: Map<string, number>, key: string, n = 1) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/**
 * What each client key really runs and has pending, as the lanes count it (offered jobs and running instances run),
 * of the jobs its counters count (keyCounted: submitted since they exist).
 */
export function realPerKey(jobs: Doc<"jobs">[], instances: Doc<"jobInstances">[]) {
  const running = new Map<string, number>();
  const pending = new Map<string, number>();
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  for (const job of jobs) {
    if (!job.clientKeyId || !job.keyCounted) continue;
    if (job.status === "pending") add(job.queue === "offered" ? running : pending, job.clientKeyId);
    if (job.status === "running" && !job.validation) add(running, job.clientKeyId);
  }
  for (const row of instances) {
    const job = jobsById.get(row.jobId);
    if (row.status === "running" && job?.clientKeyId && job.keyCounted) add(running, job.clientKeyId);
  }
  return { running, pending };
}

/**
 * Per client key: its totals (folded and not) equal what it really has pending and running; a key with a maxRunning
 * counts exactly what it runs (its row plus the ends not folded yet), a key without one keeps no count; its fairness
 * weights are as many as it says. Passes, virtual times and cursors belong to live rows of their org, with finite
 * values; a fairness key's pass names one within 64 bytes.
 */
export function checkFairShare(t: FairTables): string[] {
  const problems: string[] = [];
  const orgIds = new Set(t.orgs.map((o) => o._id as string));
  const lanesById = new Map(t.lanes.map((l) => [l._id as string, l]));
  const keysById = new Map(t.clientKeys.map((k) => [k._id as string, k]));
  const real = realPerKey(t.jobs, t.instances);

  const counted = new Map<string, number>();
  for (const row of t.keyShards) {
    if (!keysById.has(row.clientKeyId)) problems.push(`key shard ${row._id} of a missing client key`);
    add(counted, `${row.clientKeyId}:pending`, row.pending);
    add(counted, `${row.clientKeyId}:running`, row.running);
  }
  for (const d of t.counterDeltas) {
    if (!d.clientKeyId) continue;
    add(counted, `${d.clientKeyId}:pending`, d.pending ?? 0);
    add(counted, `${d.clientKeyId}:running`, d.running ?? 0);
  }
  const limitCount = new Map<string, number>();
  const rows = new Map<string, number>();
  for (const row of t.keyRunning) {
    if (rows.has(row.clientKeyId)) problems.push(`client key ${row.clientKeyId} has two running counts`);
    rows.set(row.clientKeyId, 1);
    add(limitCount, row.clientKeyId, row.running);
  }
  for (const d of t.keyRunningDeltas) add(limitCount, d.clientKeyId, d.delta);
  for (const key of t.clientKeys) {
    const where = `client key "${key.name}"`;
    for (const [status, map] of [["pending", real.pending], ["running", real.running]] as const) {
      const want = map.get(key._id) ?? 0;
      const have = counted.get(`${key._id}:${status}`) ?? 0;
      if (want !== have) problems.push(`${where} counts ${have} ${status}, really ${want}`);
    }
    const running = real.running.get(key._id) ?? 0;
    if (key.maxRunning !== undefined) {
      const have = limitCount.get(key._id) ?? 0;
      if (have !== running) problems.push(`${where} (maxRunning ${key.maxRunning}) counts ${have} running for its limit, really ${running}`);
    } else if (rows.has(key._id)) problems.push(`${where} has no maxRunning but keeps a running count`);
    const weights = t.fairnessWeights.filter((w) => w.clientKeyId === key._id).length;
    if (weights !== (key.fairnessOverrides ?? 0)) problems.push(`${where} says ${key.fairnessOverrides ?? 0} fairness weights, has ${weights}`);
  }
  for (const pass of t.fairPasses) {
    const where = `fair pass ${pass._id}`;
    if (!orgIds.has(pass.orgId)) problems.push(`${where} of a missing org`);
    if (pass.clientKeyId && keysById.get(pass.clientKeyId)?.orgId !== pass.orgId) problems.push(`${where} names a client key of another org or none`);
    if (!Number.isFinite(pass.pass) || pass.pass < 0) problems.push(`${where} is ${pass.pass}`);
    if (pass.scope === "key" && pass.fairnessKey !== undefined) problems.push(`${where} of a client key names a fairness key`);
    if (pass.fairnessKey !== undefined && new TextEncoder().encode(pass.fairnessKey).length > 64) problems.push(`${where} names a fairness key over 64 bytes`);
  }
  const passIds = new Set<string>();
  for (const pass of t.fairPasses) {
    const id = `${pass.orgId}|${pass.negPriority}|${pass.scope}|${pass.clientKeyId ?? ""}|${pass.fairnessKey ?? "\u0000"}`;
    if (passIds.has(id)) problems.push(`two fair passes for ${id}`);
    passIds.add(id);
  }
  for (const row of [...t.fairClocks, ...t.fairCursors]) {
    const lane = lanesById.get(row.laneId);
    const where = `fair ${"vtime" in row ? "clock" : "cursor"} ${row._id}`;
    if (!lane) problems.push(`${where} of a missing lane`);
    else if (lane.orgId !== row.orgId) problems.push(`${where} in another org than its lane`);
    if ("vtime" in row && !(Number.isFinite(row.vtime) && row.vtime >= 0)) problems.push(`${where} is at ${row.vtime}`);
  }
  return problems;
}

/** Client keys at their maxRunning now: their ready jobs may wait while workers do (the dispatcher holds them back). */
export function keysAtLimit(clientKeys: Doc<"clientKeys">[], jobs: Doc<"jobs">[], instances: Doc<"jobInstances">[]): Set<string> {
  const { running } = realPerKey(jobs, instances);
  return new Set(clientKeys.filter((k) => k.maxRunning !== undefined && (running.get(k._id) ?? 0) >= k.maxRunning).map((k) => k._id as string));
}
