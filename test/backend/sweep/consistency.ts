import type { Doc, TableNames } from "../../../convex/_generated/dataModel";
import type { Backend } from "../setup";

const PAGE = 2_000;

/** Every row of one table, read in pages so the check stays under the transaction limits at any size. */
export async function readAll<T extends TableNames>(t: Backend, table: T): Promise<Doc<T>[]> {
  const rows: Doc<T>[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await t.run(async (ctx) => await ctx.db.query(table).paginate({ cursor, numItems: PAGE }));
    rows.push(...(page.page as Doc<T>[]));
    if (page.isDone) return rows;
    cursor = page.continueCursor;
  }
}

type Scheduled = { name: string; args: unknown[]; state: { kind: string } };

async function pendingScheduled(t: Backend): Promise<Scheduled[]> {
  const rows = await t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect());
  return (rows as unknown as Scheduled[]).filter((r) => r.state.kind === "pending" || r.state.kind === "inProgress");
}

function add(map: Map<string, number>, key: string, n = 1) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/**
 * Check the queue's invariants over every table; returns the problems found (empty when consistent):
 * lane and org counters equal the real job counts, every job is in exactly one well-formed state, running
 * jobs hold a lease from a live row of their org, lease ids are unique, children belong to live jobs of
 * the same org, every delayed job has a promotion and every running job a lease check scheduled.
 */
export async function checkConsistency(t: Backend): Promise<string[]> {
  const problems: string[] = [];
  const [orgs, lanes, laneShards, orgShards, jobs, workers, jobOutput, jobEvents] = await Promise.all([
    readAll(t, "orgs"),
    readAll(t, "lanes"),
    readAll(t, "laneShards"),
    readAll(t, "orgShards"),
    readAll(t, "jobs"),
    readAll(t, "workers"),
    readAll(t, "jobOutput"),
    readAll(t, "jobEvents"),
  ]);
  const orgIds = new Set(orgs.map((o) => o._id as string));
  const lanesById = new Map(lanes.map((l) => [l._id as string, l]));
  const workersById = new Map(workers.map((w) => [w._id as string, w]));
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));

  for (const lane of lanes) {
    if (!orgIds.has(lane.orgId)) problems.push(`lane ${lane._id} belongs to a missing org`);
    const sorted = [...new Set(lane.capabilities)].sort();
    if (lane.routingKey !== sorted.join(",")) problems.push(`lane ${lane._id} routing key does not match its capabilities`);
  }

  // real counts from the jobs themselves
  const realLane = new Map<string, number>();
  const realOrg = new Map<string, number>();
  const leaseIds = new Map<string, string>();
  const runningPerWorker = new Map<string, number>();
  for (const job of jobs) {
    const where = `job ${job._id} (${job.status})`;
    const lane = lanesById.get(job.laneId);
    if (!lane) problems.push(`${where} is in a missing lane`);
    else if (lane.orgId !== job.orgId) problems.push(`${where} is in another org's lane`);
    else if (lane.routingKey !== job.requiredCapabilities.join(",")) problems.push(`${where} sits in the wrong lane`);
    if (!orgIds.has(job.orgId)) problems.push(`${where} belongs to a missing org`);
    if (!Object.is(job.negPriority, -job.priority)) problems.push(`${where} negPriority is not -priority`);
    if (!(job.attempt >= 0 && job.attempt <= job.maxAttempts)) problems.push(`${where} attempt ${job.attempt} of ${job.maxAttempts}`);
    const leased = job.leaseId !== undefined || job.leaseExpiresAt !== undefined;
    switch (job.status) {
      case "pending":
        if (job.queue !== "ready" && job.queue !== "delayed") problems.push(`${where} has no queue`);
        if (leased) problems.push(`${where} still holds a lease`);
        if (job.finishedAt !== undefined) problems.push(`${where} has finishedAt`);
        add(realLane, `${job.laneId}:pending`);
        break;
      case "running": {
        if (job.queue !== undefined) problems.push(`${where} is also queued as ${job.queue}`);
        if (!job.leaseId || job.leaseExpiresAt === undefined) problems.push(`${where} has no lease`);
        const worker = job.workerId ? workersById.get(job.workerId) : undefined;
        if (!worker) problems.push(`${where} has no worker`);
        else if (worker.orgId !== job.orgId) problems.push(`${where} is run by another org's worker`);
        if (job.attempt < 1) problems.push(`${where} runs at attempt ${job.attempt}`);
        if (job.finishedAt !== undefined) problems.push(`${where} has finishedAt`);
        if (job.workerId) add(runningPerWorker, job.workerId);
        add(realLane, `${job.laneId}:running`);
        break;
      }
      case "succeeded":
      case "canceled":
      case "dead":
        if (job.queue !== undefined) problems.push(`${where} is also queued as ${job.queue}`);
        if (leased) problems.push(`${where} still holds a lease`);
        if (job.finishedAt === undefined) problems.push(`${where} has no finishedAt`);
        add(realOrg, `${job.orgId}:${job.status}`);
        break;
      default:
        problems.push(`${where} has an unknown status`);
    }
    if (job.leaseId !== undefined) {
      const other = leaseIds.get(job.leaseId);
      if (other) problems.push(`jobs ${other} and ${job._id} share lease ${job.leaseId}`);
      leaseIds.set(job.leaseId, job._id);
    }
  }

  // counters
  const counted = new Map<string, number>();
  for (const s of laneShards) {
    if (!lanesById.has(s.laneId)) problems.push(`lane shard ${s._id} of a missing lane`);
    add(counted, `${s.laneId}:pending`, s.pending);
    add(counted, `${s.laneId}:running`, s.running);
  }
  for (const lane of lanes) {
    for (const status of ["pending", "running"]) {
      const key = `${lane._id}:${status}`;
      const want = realLane.get(key) ?? 0;
      const have = counted.get(key) ?? 0;
      if (want !== have) problems.push(`lane "${lane.routingKey}" counts ${have} ${status}, really ${want}`);
    }
  }
  const orgCounted = new Map<string, number>();
  for (const s of orgShards) {
    for (const status of ["succeeded", "canceled", "dead"] as const) add(orgCounted, `${s.orgId}:${status}`, s[status]);
  }
  for (const org of orgs) {
    for (const status of ["succeeded", "canceled", "dead"]) {
      const key = `${org._id}:${status}`;
      const want = realOrg.get(key) ?? 0;
      const have = orgCounted.get(key) ?? 0;
      if (want !== have) problems.push(`org "${org.name}" counts ${have} ${status}, really ${want}`);
    }
  }
  for (const [workerId, running] of runningPerWorker) {
    const worker = workersById.get(workerId)!;
    if (running > worker.maxConcurrentJobs) problems.push(`worker ${workerId} runs ${running} jobs, max ${worker.maxConcurrentJobs}`);
  }

  // children
  const seqs = new Map<string, number[]>();
  for (const chunk of jobOutput) {
    const job = jobsById.get(chunk.jobId);
    if (!job) problems.push(`output chunk ${chunk._id} of a missing job`);
    else if (job.orgId !== chunk.orgId) problems.push(`output chunk ${chunk._id} in another org than its job`);
    seqs.set(chunk.jobId, [...(seqs.get(chunk.jobId) ?? []), chunk.seq]);
  }
  for (const [jobId, list] of seqs) {
    const sorted = list.sort((a, b) => a - b);
    if (sorted.some((seq, i) => seq !== i)) problems.push(`job ${jobId} output sequence has gaps or duplicates`);
  }
  for (const event of jobEvents) {
    const job = jobsById.get(event.jobId);
    if (!job) problems.push(`event ${event._id} of a missing job`);
    else if (job.orgId !== event.orgId) problems.push(`event ${event._id} in another org than its job`);
  }

  // the timers that move jobs on
  const scheduled = await pendingScheduled(t);
  const promotions = new Set(scheduled.filter((s) => s.name.includes("promote")).map((s) => (s.args[0] as { jobId: string }).jobId));
  const leaseChecks = new Set(
    scheduled.filter((s) => s.name.includes("checkLease")).map((s) => (s.args[0] as { leaseId: string }).leaseId),
  );
  for (const job of jobs) {
    if (job.status === "pending" && job.queue === "delayed" && !promotions.has(job._id)) {
      problems.push(`delayed job ${job._id} has no promotion scheduled`);
    }
    if (job.status === "running" && job.leaseId && !leaseChecks.has(job.leaseId)) {
      problems.push(`running job ${job._id} has no lease check scheduled`);
    }
  }
  return problems;
}
