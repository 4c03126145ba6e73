import type { Doc, TableNames } from "../../../convex/_generated/dataModel";
import { BATCH_SHARDS, batchShardOf } from "../../../convex/pipelines/dependencies";
import { routingKey } from "../../../convex/lanes/lanes";
import { LIMITS } from "../../../convex/core/limits";
import { APP_LIMITS } from "../../../convex/core/appLimits";
import { jsonBytes } from "../../../convex/core/validate";
import { classOf, meetsClass } from "../../../convex/lanes/requirements";
import { routingCapabilities } from "../../../convex/lanes/routing";
import { mayRun } from "../../../convex/trust/validation";
import type { Backend } from "../setup";
import { checkFairShare, keysAtLimit } from "./fairConsistency";
import { checkMetrics } from "./metricsConsistency";

const PAGE = 2_000;
// pages of big rows (job bodies, checkpoints) end early at this many bytes, under the transaction limit
const PAGE_BYTES = 4 * 1024 * 1024;

/** Every row of one table, read in pages so the check stays under the transaction limits at any size. */
export async function readAll<T extends TableNames>(t: Backend, table: T): Promise<Doc<T>[]> {
  const rows: Doc<T>[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await t.run(async (ctx) => await ctx.db.query(table).paginate({ cursor, numItems: PAGE, maximumBytesRead: PAGE_BYTES }));
    rows.push(...(page.page as Doc<T>[]));
    if (page.isDone) return rows;
    cursor = page.continueCursor;
  }
}

type Scheduled = { _id: string; name: string; args: unknown[]; state: { kind: string } };

async function pendingScheduled(t: Backend): Promise<Scheduled[]> {
  const rows = await t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect());
  return (rows as unknown as Scheduled[]).filter((r) => r.state.kind === "pending" || r.state.kind === "inProgress");
}

function add(map: Map<string, number>, key: string, n = 1) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/**
 * Check the queue's invariants over every table; returns the problems found (empty when consistent):
 * lane and org counters equal the real job counts (offered jobs count as running; a replicated job counts as
 * pending while ready, and each of its running instances as running), every job is in exactly
 * one well-formed state, running jobs hold a lease from a live row of their org, offered ones an inbox offer
 * and an expiry check, lease ids are unique, children belong to live jobs of the same org, every delayed job
 * has a promotion and every running job its lease check scheduled, the waiting lines match what each worker
 * wants, an idle dispatcher left no ready job that a waiting worker could take (unless its client key is at its
 * maxRunning), the metrics count the jobs there are, and per client key its counters match its jobs
 * (test/backend/sweep/fairConsistency.ts).
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
  const [inbox, waiters, laneWaiters, dispatchStates, workerSlots, counterDeltas] = await Promise.all([
    readAll(t, "inbox"),
    readAll(t, "waiters"),
    readAll(t, "laneWaiters"),
    readAll(t, "dispatchStates"),
    readAll(t, "workerSlots"),
    readAll(t, "counterDeltas"),
  ]);
  const [instances, instanceResults, creditTotals] = await Promise.all([readAll(t, "jobInstances"), readAll(t, "instanceResults"), readAll(t, "creditTotals")]);
  const appVersions = await readAll(t, "appVersions");
  const [clientKeys, keyShards, keyRunning, keyRunningDeltas, fairPasses, fairClocks, fairCursors, fairnessWeights] = await Promise.all([
    readAll(t, "clientKeys"),
    readAll(t, "keyShards"),
    readAll(t, "keyRunning"),
    readAll(t, "keyRunningDeltas"),
    readAll(t, "fairPasses"),
    readAll(t, "fairClocks"),
    readAll(t, "fairCursors"),
    readAll(t, "fairnessWeights"),
  ]);
  // a worker runs its jobs and its instances of replicated jobs (each under a lease of its own)
  const runningInstances = instances.filter((r) => r.status === "running");
  const orgIds = new Set(orgs.map((o) => o._id as string));
  const lanesById = new Map(lanes.map((l) => [l._id as string, l]));
  const workersById = new Map(workers.map((w) => [w._id as string, w]));
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));

  for (const lane of lanes) {
    if (!orgIds.has(lane.orgId)) problems.push(`lane ${lane._id} belongs to a missing org`);
    const sorted = [...new Set(lane.capabilities)].sort();
    if (lane.routingKey !== routingKey(sorted, lane.requirements)) problems.push(`lane ${lane._id} routing key does not match its capabilities and class`);
  }

  // real counts from the jobs themselves
  const realLane = new Map<string, number>();
  const realOrg = new Map<string, number>();
  const leaseIds = new Map<string, string>();
  const runningPerWorker = new Map<string, number>();
  for (const job of jobs) {
    const where = `job ${job._id} (${job.status}${job.queue ? `, ${job.queue}` : ""})`;
    const lane = lanesById.get(job.laneId);
    const finished = job.status === "succeeded" || job.status === "canceled" || job.status === "dead";
    // the maintenance pass deletes lanes that hold nothing: a finished job may point at one
    if (!lane) {
      // a waiting job's lane is found again when it is released
      if (!finished && job.status !== "waiting") problems.push(`${where} is in a missing lane`);
    } else if (lane.orgId !== job.orgId) problems.push(`${where} is in another org's lane`);
    else if (lane.routingKey !== routingKey(routingCapabilities(job.type, job.requiredCapabilities), classOf(job.requirements))) problems.push(`${where} sits in the wrong lane`);
    if (!orgIds.has(job.orgId)) problems.push(`${where} belongs to a missing org`);
    if (!Object.is(job.negPriority, -job.priority)) problems.push(`${where} negPriority is not -priority`);
    if (!(job.attempt >= 0 && job.attempt <= job.maxAttempts)) problems.push(`${where} attempt ${job.attempt} of ${job.maxAttempts}`);
    const leased = job.leaseId !== undefined || job.leaseExpiresAt !== undefined;
    switch (job.status) {
      case "pending":
        if (job.queue !== "ready" && job.queue !== "delayed" && job.queue !== "offered") problems.push(`${where} has no queue`);
        if (leased) problems.push(`${where} still holds a lease`);
        if (job.finishedAt !== undefined) problems.push(`${where} has finishedAt`);
        if (job.queue === "offered") {
          const worker = job.workerId ? workersById.get(job.workerId) : undefined;
          if (!worker) problems.push(`${where} is offered to no worker`);
          else if (worker.orgId !== job.orgId) problems.push(`${where} is offered to another org's worker`);
          else if (worker.revoked) problems.push(`${where} is offered to a revoked worker`);
          if (job.offerExpiresAt === undefined) problems.push(`${where} has no offer expiry`);
          if (!inbox.some((r) => r.kind === "offer" && r.jobId === job._id && r.workerId === job.workerId)) {
            problems.push(`${where} has no offer in its worker's inbox`);
          }
          if (job.workerId) add(runningPerWorker, job.workerId);
          add(realLane, `${job.laneId}:running`);
        } else {
          if (job.workerId !== undefined) problems.push(`${where} is queued but names a worker`);
          add(realLane, `${job.laneId}:pending`);
        }
        break;
      case "running": {
        if (job.queue !== undefined) problems.push(`${where} is also queued as ${job.queue}`);
        if (job.validation) {
          // a replicated job's leases are its instances' (checkInstances)
          if (leased || job.workerId !== undefined) problems.push(`${where} is replicated but holds a lease or a worker`);
          if (job.finishedAt !== undefined) problems.push(`${where} has finishedAt`);
          // it counts nothing itself in its lane: its running instances do (below)
          break;
        }
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
      case "waiting":
        if (job.queue !== undefined) problems.push(`${where} is also queued as ${job.queue}`);
        if (leased || job.workerId !== undefined) problems.push(`${where} holds a lease or a worker`);
        if (job.finishedAt !== undefined) problems.push(`${where} has finishedAt`);
        // a waiting job waits for parents or (single flight) for an identical cacheable job's result
        if (job.cacheWaitsOn !== undefined) {
          const source = jobsById.get(job.cacheWaitsOn);
          if (!source || source.cache?.key !== job.cache?.key || source.orgId !== job.orgId) problems.push(`${where} waits on ${job.cacheWaitsOn}, not an identical job of its org`);
          if (job.unmetParents !== undefined) problems.push(`${where} waits on a cached job and on parents`);
        } else if (!(job.unmetParents !== undefined && job.unmetParents > 0)) problems.push(`${where} waits for ${job.unmetParents} parents`);
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

  // a running instance holds a worker slot and does the whole work: it counts as running in its job's lane
  for (const row of runningInstances) {
    const job = jobsById.get(row.jobId);
    if (job) add(realLane, `${job.laneId}:running`);
  }

  // counters
  const counted = new Map<string, number>();
  for (const s of laneShards) {
    if (!lanesById.has(s.laneId)) problems.push(`lane shard ${s._id} of a missing lane`);
    add(counted, `${s.laneId}:pending`, s.pending);
    add(counted, `${s.laneId}:running`, s.running);
  }
  const orgCounted = new Map<string, number>();
  for (const d of counterDeltas) {
    if (d.laneId) {
      if (!lanesById.has(d.laneId)) problems.push(`counter change ${d._id} of a missing lane`);
      add(counted, `${d.laneId}:pending`, d.pending ?? 0);
      add(counted, `${d.laneId}:running`, d.running ?? 0);
    }
    for (const status of ["succeeded", "canceled", "dead"] as const) add(orgCounted, `${d.orgId}:${status}`, d[status] ?? 0);
  }
  for (const lane of lanes) {
    for (const status of ["pending", "running"]) {
      const key = `${lane._id}:${status}`;
      const want = realLane.get(key) ?? 0;
      const have = counted.get(key) ?? 0;
      if (want !== have) problems.push(`lane "${lane.routingKey}" counts ${have} ${status}, really ${want}`);
    }
  }
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
  for (const row of runningInstances) add(runningPerWorker, row.workerId);
  for (const [workerId, running] of runningPerWorker) {
    const worker = workersById.get(workerId)!;
    if (running > worker.maxConcurrentJobs) problems.push(`worker ${workerId} runs ${running} jobs, max ${worker.maxConcurrentJobs}`);
  }
  for (const row of workerSlots) {
    const really =
      jobs.filter((j) => j.workerId === row.workerId && j.status === "running").length + runningInstances.filter((r) => r.workerId === row.workerId).length;
    if (row.running !== really) problems.push(`worker ${row.workerId} counts ${row.running} running jobs, really ${really}`);
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
  // bodies: one row per part beside a live job of the same org, exactly where the job row says it has one
  const parts = new Set<string>();
  for (const body of await readAll(t, "jobBodies")) {
    const job = jobsById.get(body.jobId);
    if (!job) problems.push(`${body.part} body ${body._id} of a missing job`);
    else if (job.orgId !== body.orgId) problems.push(`${body.part} body ${body._id} in another org than its job`);
    const key = `${body.jobId}:${body.part}`;
    if (parts.has(key)) problems.push(`job ${body.jobId} has two ${body.part} bodies`);
    parts.add(key);
  }
  for (const job of jobs) {
    if ((job.payloadBytes !== undefined) !== parts.has(`${job._id}:payload`)) problems.push(`job ${job._id} payload size and body disagree`);
    if ((job.resultBytes !== undefined) !== parts.has(`${job._id}:result`)) problems.push(`job ${job._id} result size and body disagree`);
    if (job.payloadBytes !== undefined && job.payload !== undefined) problems.push(`job ${job._id} has its payload both on the row and beside it`);
    if (job.payloadBytes !== undefined && job.error !== undefined && job.error.length > LIMITS.summaryErrorChars) problems.push(`job ${job._id} keeps a long error on its row`);
  }
  for (const event of jobEvents) {
    const job = jobsById.get(event.jobId);
    if (!job) problems.push(`event ${event._id} of a missing job`);
    else if (job.orgId !== event.orgId) problems.push(`event ${event._id} in another org than its job`);
  }

  // the timers that move jobs on
  const scheduled = await pendingScheduled(t);
  const scheduledIds = new Set(scheduled.map((s) => s._id));
  const promotions = new Set(scheduled.filter((s) => s.name.includes("promote")).map((s) => (s.args[0] as { jobId: string }).jobId));
  const leaseChecks = new Set(
    scheduled.filter((s) => s.name.includes("checkLease")).map((s) => (s.args[0] as { leaseId: string }).leaseId),
  );
  const offerChecks = new Set(
    scheduled.filter((s) => s.name.includes("offerExpired")).map((s) => (s.args[0] as { jobId: string }).jobId),
  );
  for (const job of jobs) {
    if (job.status === "pending" && job.queue === "delayed" && !promotions.has(job._id)) {
      problems.push(`delayed job ${job._id} has no promotion scheduled`);
    }
    if (job.status === "pending" && job.queue === "offered" && !offerChecks.has(job._id)) {
      problems.push(`offered job ${job._id} has no offer expiry scheduled`);
    }
    if (job.status === "running" && job.leaseId && !leaseChecks.has(job.leaseId)) {
      problems.push(`running job ${job._id} has no lease check scheduled`);
    }
    if (job.status === "running" && job.leaseCheck && !scheduledIds.has(job.leaseCheck)) {
      problems.push(`running job ${job._id} names a lease check that is not pending`);
    }
  }

  const instanceChecks = new Set(
    scheduled.filter((s) => s.name.includes("checkInstanceLease")).map((s) => (s.args[0] as { leaseId: string }).leaseId),
  );
  for (const row of instances) {
    const live = row.status === "running" || (row.status === "canceled" && !row.reported);
    if (live && (!instanceChecks.has(row.leaseId) || !row.leaseCheck || !scheduledIds.has(row.leaseCheck))) {
      problems.push(`${row.status} instance ${row._id} has no lease check scheduled`);
    }
    if (row.status === "running" && row.leaseExpiresAt === undefined) problems.push(`running instance ${row._id} has no lease`);
    const other = leaseIds.get(row.leaseId);
    if (other) problems.push(`${other} and instance ${row._id} share lease ${row.leaseId}`);
    leaseIds.set(row.leaseId, `instance ${row._id}`);
  }
  problems.push(...checkInstances(jobs, instances, instanceResults));
  problems.push(...checkPendingCredit(instances, creditTotals));
  problems.push(...checkFairShare({ orgs, lanes, jobs, instances, clientKeys, counterDeltas, keyShards, keyRunning, keyRunningDeltas, fairPasses, fairClocks, fairCursors, fairnessWeights }));
  const atLimit = keysAtLimit(clientKeys, jobs, instances);
  problems.push(...checkWaiting({ jobs, instances, lanes, workers, inbox, waiters, laneWaiters, dispatchStates, appVersions, atLimit }));
  problems.push(...checkParentRefs(jobs, await readAll(t, "parentRefs")));
  problems.push(...checkCache(jobs, await readAll(t, "cacheEntries"), await readAll(t, "cacheResults"), orgIds));
  const settlements = await readAll(t, "settlements");
  problems.push(...checkSettlements(settlements, scheduled));
  const awaitingSeal = new Set((await readAll(t, "batchSeals")).filter((s) => s.sealedAt === undefined).map((s) => `${s.orgId}:${s.batchId}`));
  problems.push(...checkDependencies(jobs, await readAll(t, "jobDependencies"), await readAll(t, "batches"), settlements, awaitingSeal));
  const metricTotals = { cells: await readAll(t, "metricCells"), clients: await readAll(t, "metricClients"), orgs: await readAll(t, "metricOrgs") };
  problems.push(...checkMetrics(jobs, counterDeltas, metricTotals));
  return problems;
}

/**
 * Each job not yet ended that was submitted with parents names each of them (its listed jobs and its batch) in one
 * reference row (pipelines/parentRefs.ts), and an ended job names none; a named parent job exists (it is kept for the child).
 */
function checkParentRefs(jobs: Doc<"jobs">[], refs: Doc<"parentRefs">[]): string[] {
  const problems: string[] = [];
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  const named = new Map<string, string[]>();
  for (const ref of refs) {
    const child = jobsById.get(ref.childId);
    const where = `parent reference ${ref._id} of job ${ref.childId}`;
    if (!child) problems.push(`${where}: its child is missing`);
    else if (FINAL.has(child.status)) problems.push(`${where}: its child already ended ${child.status}`);
    else if (child.orgId !== ref.orgId) problems.push(`${where}: in another org than its child`);
    if ((ref.parentId === undefined) === (ref.batchId === undefined)) problems.push(`${where}: names neither or both a job and a batch`);
    if (ref.parentId !== undefined && !jobsById.has(ref.parentId)) problems.push(`${where}: its parent ${ref.parentId} is gone`);
    named.set(ref.childId, [...(named.get(ref.childId) ?? []), ref.parentId ?? `batch:${ref.batchId}`]);
  }
  for (const job of jobs) {
    if (!job.dependsOn || FINAL.has(job.status)) continue;
    const want = [...(job.dependsOn.jobs ?? []), ...(job.dependsOn.batch !== undefined ? [`batch:${job.dependsOn.batch}`] : [])].sort();
    const have = (named.get(job._id) ?? []).sort();
    if (want.join() !== have.join()) problems.push(`job ${job._id} (${job.status}) names parents ${have.join(", ") || "none"}, was submitted with ${want.join(", ")}`);
  }
  return problems;
}

/** Each settlement (pipelines/settlements.ts) has its next page scheduled, of its own generation. */
function checkSettlements(settlements: Doc<"settlements">[], scheduled: Scheduled[]): string[] {
  const pages = new Set(
    scheduled.filter((s) => s.name === "dependencies:settle").map((s) => {
      const { settlementId, generation } = s.args[0] as { settlementId: string; generation: number };
      return `${settlementId}:${generation}`;
    }),
  );
  return settlements.filter((row) => !pages.has(`${row._id}:${row.generation}`)).map((row) => `settlement ${row._id} of job ${row.parentId} has no page scheduled`);
}

const FINAL = new Set(["succeeded", "canceled", "dead"]);

/**
 * Dependencies: each waiting job has exactly `unmetParents` edges, each edge an unmet parent of the same org
 * (a job not yet succeeded, or a batch with jobs not yet ended or not yet sealed); every batch row counts its jobs as they are;
 * only waiting jobs have edges, and no job waits on a parent that failed.
 */
function checkDependencies(
  jobs: Doc<"jobs">[],
  edges: Doc<"jobDependencies">[],
  batches: Doc<"batches">[],
  settling: Doc<"settlements">[],
  awaitingSeal: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  // edges of a parent whose end is being settled page by page (a settlement row) may outlive it until their page
  const settlingJobs = new Set(settling.filter((s) => s.batchId === undefined).map((s) => s.parentId));
  const settlingBatches = new Set(settling.filter((s) => s.batchId !== undefined).map((s) => `${s.orgId}:${s.batchId}`));
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  const batchOf = batchSums(batches, problems);
  const edgesOf = new Map<string, number>();
  for (const edge of edges) {
    const where = `dependency ${edge._id} of job ${edge.childId}`;
    add(edgesOf, edge.childId);
    const child = jobsById.get(edge.childId);
    if (!child) problems.push(`${where}: its child is missing`);
    else if (child.status !== "waiting") problems.push(`${where}: its child is ${child.status}, not waiting`);
    else if (child.orgId !== edge.orgId) problems.push(`${where}: in another org than its child`);
    if ((edge.parentId === undefined) === (edge.batchId === undefined)) problems.push(`${where}: names neither or both a job and a batch`);
    if (edge.parentId !== undefined) {
      const parent = jobsById.get(edge.parentId);
      if (!parent) problems.push(`${where}: its parent is missing`);
      else if (parent.orgId !== edge.orgId) problems.push(`${where}: its parent is in another org`);
      else if (FINAL.has(parent.status) && !settlingJobs.has(parent._id)) problems.push(`${where}: its parent already ended ${parent.status}`);
    }
    if (edge.batchId !== undefined) {
      const batch = batchOf.get(`${edge.orgId}:${edge.batchId}`);
      const beingSettled = settlingBatches.has(`${edge.orgId}:${edge.batchId}`);
      if (!batch) problems.push(`${where}: its batch has no row`);
      // a batch submitted with `seal` keeps its children waiting until it is sealed (pipelines/batchSeals.ts)
      else if (batch.unfinished === 0 && !beingSettled && !awaitingSeal.has(`${edge.orgId}:${edge.batchId}`)) problems.push(`${where}: its batch has ended`);
      else if (batch.failed > 0 && !beingSettled) problems.push(`${where}: its batch has a failed job`);
    }
  }
  for (const job of jobs) {
    if (job.status === "waiting" && job.cacheWaitsOn === undefined && (edgesOf.get(job._id) ?? 0) !== job.unmetParents) {
      problems.push(`waiting job ${job._id} counts ${job.unmetParents} unmet parents, has ${edgesOf.get(job._id) ?? 0} edges`);
    }
    if (job.status !== "waiting" && job.unmetParents !== undefined) problems.push(`job ${job._id} (${job.status}) still counts unmet parents`);
  }
  const real = new Map<string, { unfinished: number; succeeded: number; failed: number }>();
  for (const job of jobs) {
    if (job.batchId === undefined) continue;
    const key = `${job.orgId}:${job.batchId}`;
    const counts = real.get(key) ?? { unfinished: 0, succeeded: 0, failed: 0 };
    if (!FINAL.has(job.status)) counts.unfinished++;
    else if (job.status === "succeeded") counts.succeeded++;
    else counts.failed++;
    real.set(key, counts);
  }
  for (const batch of batchOf.values()) {
    // purged jobs leave the batch's ended counts; its unfinished jobs cannot be purged
    const counts = real.get(`${batch.orgId}:${batch.batchId}`) ?? { unfinished: 0, succeeded: 0, failed: 0 };
    if (batch.unfinished !== counts.unfinished) problems.push(`batch ${batch.batchId} counts ${batch.unfinished} unfinished jobs, really ${counts.unfinished}`);
    if (batch.succeeded < counts.succeeded || batch.failed < counts.failed) {
      problems.push(`batch ${batch.batchId} counts ${batch.succeeded} succeeded and ${batch.failed} failed, really ${counts.succeeded} and ${counts.failed}`);
    }
  }
  for (const key of real.keys()) if (!batchOf.has(key)) problems.push(`batch ${key} has jobs but no row`);
  const unfinishedInShard = new Map<string, number>();
  for (const job of jobs) if (job.batchId !== undefined && !FINAL.has(job.status)) add(unfinishedInShard, `${job.orgId}:${job.batchId}:${batchShardOf(job._id)}`);
  for (const row of batches) {
    const inShard = row.shard === undefined ? undefined : (unfinishedInShard.get(`${row.orgId}:${row.batchId}:${row.shard}`) ?? 0);
    if (inShard !== undefined && row.unfinished > inShard) problems.push(`batch ${row.batchId}'s shard ${row.shard} counts ${row.unfinished} unfinished jobs, has ${inShard}`);
  }
  return problems;
}

/**
 * A batch's counts are the sums over its shard rows (pipelines/dependencies.ts): at most one row per shard, each shard in
 * 0…BATCH_SHARDS−1 (a row without a shard is from before sharding, at most one), and a shard never counts more
 * unfinished jobs than the batch has in it (the release of its children relies on it).
 */
function batchSums(batches: Doc<"batches">[], problems: string[]) {
  const sums = new Map<string, { orgId: string; batchId: string; unfinished: number; succeeded: number; failed: number }>();
  const seen = new Set<string>();
  for (const row of batches) {
    const key = `${row.orgId}:${row.batchId}`;
    const shardKey = `${key}:${row.shard ?? "none"}`;
    if (seen.has(shardKey)) problems.push(`batch ${row.batchId} has two rows for shard ${row.shard ?? "(none)"}`);
    seen.add(shardKey);
    if (row.shard !== undefined && !(Number.isInteger(row.shard) && row.shard >= 0 && row.shard < BATCH_SHARDS)) problems.push(`batch ${row.batchId} has a row of shard ${row.shard}`);
    const sum = sums.get(key) ?? { orgId: row.orgId, batchId: row.batchId, unfinished: 0, succeeded: 0, failed: 0 };
    sum.unfinished += row.unfinished;
    sum.succeeded += row.succeeded;
    sum.failed += row.failed;
    sums.set(key, sum);
  }
  return sums;
}

/**
 * Replicated jobs (trust/instances.ts): instances belong to a live job of their org; a running replicated job has
 * running instances (side by side, each under its own lease) and a finished one none; the round's started
 * count is its number of instances; the workers, machines (and, distinct by donor, donors) a job excludes are its
 * instances' that were not given back (failed ones stay excluded); a valid job has `quorum` valid instances (or
 * one accepted alone); credit is granted only to a valid result (or to an instance canceled at quorum); every
 * result is kept once per distinct hash beside the instances.
 */
function checkInstances(jobs: Doc<"jobs">[], instances: Doc<"jobInstances">[], results: Doc<"instanceResults">[]): string[] {
  const problems: string[] = [];
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  for (const row of instances) {
    const job = jobsById.get(row.jobId);
    if (!job) problems.push(`instance ${row._id} of a missing job`);
    else if (job.orgId !== row.orgId) problems.push(`instance ${row._id} in another org than its job`);
    else if (!job.validation) problems.push(`instance ${row._id} of job ${job._id}, which is not replicated`);
    if (row.credit === "granted" && row.valid !== true && !(row.status === "canceled" && row.atQuorum)) problems.push(`instance ${row._id} was credited without a valid result`);
    if (row.status === "completed" && row.resultHash === undefined) problems.push(`completed instance ${row._id} has no result hash`);
    const kept = results.filter((r) => r.jobId === row.jobId && r.round === row.round && r.resultHash === row.resultHash);
    if (row.status === "completed" && row.result === undefined && kept.length !== 1) problems.push(`completed instance ${row._id} has ${kept.length} kept results of its hash`);
    if (row.status === "failed" && row.error === undefined) problems.push(`failed instance ${row._id} says no error`);
  }
  for (const r of results) {
    if (!instances.some((i) => i.jobId === r.jobId && i.round === r.round && i.resultHash === r.resultHash)) problems.push(`kept result ${r._id} of no instance`);
  }
  for (const job of jobs) {
    const rules = job.validation;
    if (!rules) continue;
    const round = instances.filter((r) => r.jobId === job._id && r.round === rules.round);
    const running = round.filter((r) => r.status === "running");
    if (job.status === "running" && running.length === 0) problems.push(`running replicated job ${job._id} has no running instance`);
    if (job.status !== "running" && job.status !== "pending" && running.length > 0) problems.push(`${job.status} replicated job ${job._id} still has a running instance`);
    // delayed (a failed instance's retry backoff), its other instances run on
    if (rules.started !== round.length) problems.push(`replicated job ${job._id} counts ${rules.started} instances, really ${round.length}`);
    // the workers and machines it is never offered to again: those running an instance or that ran one to its end, each once
    const live = round.filter((r) => r.status !== "released");
    const sameSet = (a: string[], b: string[]) => a.length === b.length && new Set(a).size === a.length && a.every((x) => b.includes(x));
    if (!sameSet(rules.machines, live.map((r) => r.machineId))) problems.push(`replicated job ${job._id} excludes machines ${rules.machines.join(",")}, its live instances ran on ${live.map((r) => r.machineId).join(",")}`);
    if (!sameSet(rules.workers, live.map((r) => r.workerId))) problems.push(`replicated job ${job._id} excludes other workers than its live instances'`);
    if (rules.distinct === "donor" && !sameSet(rules.donors ?? [], live.map((r) => r.donorKey ?? ""))) problems.push(`replicated job ${job._id} excludes donors ${(rules.donors ?? []).join(",")}, its live instances' are ${live.map((r) => r.donorKey).join(",")}`);
    if (rules.distinct !== "donor" && (rules.donors !== undefined || live.some((r) => r.donorKey !== undefined))) problems.push(`replicated job ${job._id} records donors without distinct "donor"`);
    if (rules.outcome === "valid") {
      const valid = round.filter((r) => r.valid === true);
      if (job.status !== "succeeded") problems.push(`replicated job ${job._id} is valid but ${job.status}`);
      if (valid.length < rules.quorum && !(valid.length === 1 && valid[0].alone)) problems.push(`replicated job ${job._id} is valid with ${valid.length} valid instances of ${rules.quorum}`);
    }
    // the instance whose progress the job shows is one of its running instances
    if (job.progressInstance !== undefined && !round.some((r) => r._id === job.progressInstance && r.status === "running")) problems.push(`replicated job ${job._id} shows the progress of an instance that is not running`);
    if ((rules.outcome === "no_quorum" || rules.outcome === "too_many_errors") && job.status !== "dead") problems.push(`replicated job ${job._id} ended ${rules.outcome} but is ${job.status}`);
  }
  return problems;
}

/** Each worker's pending credit sum (on its credit total) is the sum of its results waiting for their quorum. */
function checkPendingCredit(instances: Doc<"jobInstances">[], totals: Doc<"creditTotals">[]): string[] {
  const problems: string[] = [];
  const pending = new Map<string, { cpuMs: number; jobs: number }>();
  for (const row of instances) {
    if (row.credit !== "pending") continue;
    const sum = pending.get(row.workerId) ?? { cpuMs: 0, jobs: 0 };
    sum.cpuMs += row.creditCpuMs ?? 0;
    sum.jobs++;
    pending.set(row.workerId, sum);
  }
  const byWorker = new Map(totals.map((t) => [t.workerId as string, t]));
  for (const [workerId, sum] of pending) {
    const total = byWorker.get(workerId);
    if (total?.pendingCpuMs !== sum.cpuMs || total.pendingJobs !== sum.jobs) problems.push(`worker ${workerId} has ${sum.jobs} pending results of ${sum.cpuMs} ms; its total says ${total?.pendingJobs} of ${total?.pendingCpuMs}`);
  }
  for (const total of totals) {
    if (!pending.has(total.workerId) && ((total.pendingJobs ?? 0) !== 0 || (total.pendingCpuMs ?? 0) !== 0)) problems.push(`worker ${total.workerId} has no pending results; its total says ${total.pendingJobs}`);
  }
  return problems;
}

type WaitingTables = {
  jobs: Doc<"jobs">[];
  instances: Doc<"jobInstances">[];
  lanes: Doc<"lanes">[];
  workers: Doc<"workers">[];
  inbox: Doc<"inbox">[];
  waiters: Doc<"waiters">[];
  laneWaiters: Doc<"laneWaiters">[];
  dispatchStates: Doc<"dispatchStates">[];
  appVersions: Doc<"appVersions">[];
  /** client keys at their maxRunning: their ready jobs wait by design */
  atLimit: Set<string>;
};

/** What a worker downloads to run the job, as queue/downloadBytes.ts counts it. */
function downloadSize(job: Doc<"jobs">, appVersions: Doc<"appVersions">[]): number {
  const module = job.app ? (appVersions.find((a) => a.orgId === job.orgId && a.name === job.app!.name && a.version === job.app!.version)?.bytes ?? 0) : 0;
  const checkpoint = job.checkpointed && !job.validation ? Math.ceil(APP_LIMITS.checkpointBytesMax / 3) * 4 : 0;
  return (job.payloadBytes ?? jsonBytes(job.payload ?? null)) + checkpoint + module;
}

/** Inbox rows, waiting lines and the dispatcher's idle state agree with the jobs and the workers. */
function checkWaiting({ jobs, instances, lanes, workers, inbox, waiters, laneWaiters, dispatchStates, appVersions, atLimit }: WaitingTables): string[] {
  const problems: string[] = [];
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  const workersById = new Map(workers.map((w) => [w._id as string, w]));
  const lanesById = new Map(lanes.map((l) => [l._id as string, l]));
  const waiterOf = new Map(waiters.map((w) => [w.workerId as string, w]));

  const held = new Map<string, number>();
  for (const row of inbox) {
    const where = `inbox ${row.kind} ${row._id} of worker ${row.workerId}`;
    const worker = workersById.get(row.workerId);
    if (!worker) problems.push(`${where}: no such worker`);
    else if (worker.orgId !== row.orgId) problems.push(`${where}: in another org than its worker`);
    if (row.kind === "resync") continue;
    const job = row.jobId ? jobsById.get(row.jobId) : undefined;
    if (!job) {
      problems.push(`${where}: its job is missing`);
      continue;
    }
    if (row.kind === "offer" && !(job.status === "pending" && job.queue === "offered" && job.workerId === row.workerId)) {
      problems.push(`${where}: job ${job._id} is ${job.status}/${job.queue}, not offered to this worker`);
    }
    const canceledInstance = instances.some((r) => r.jobId === job._id && r.workerId === row.workerId && r.status === "canceled" && !r.reported);
    if (row.kind === "cancel" && !(job.status === "running" && job.cancelRequested && job.workerId === row.workerId) && !canceledInstance) {
      problems.push(`${where}: job ${job._id} is not a cancel-requested job running there, nor an instance canceled there`);
    }
    if (row.kind === "offer") held.set(row.workerId, (held.get(row.workerId) ?? 0) + 1);
  }
  for (const job of jobs) {
    if (job.status === "running" && job.cancelRequested && !inbox.some((r) => r.kind === "cancel" && r.jobId === job._id)) {
      problems.push(`running job ${job._id} was canceled but its worker's doorbell has no cancel notice`);
    }
  }

  for (const waiter of waiters) {
    const where = `worker ${waiter.workerId}`;
    const worker = workersById.get(waiter.workerId);
    if (!worker) {
      problems.push(`${where}: waiters row of a missing worker`);
      continue;
    }
    if (waiter.wants < 0) problems.push(`${where} wants ${waiter.wants}`);
    if ((waiter.wants > 0) !== (waiter.since !== undefined)) problems.push(`${where} wants ${waiter.wants} but since is ${waiter.since}`);
    if (waiter.wants > 0 && worker.revoked) problems.push(`${where} is revoked but still waiting`);
    const running =
      jobs.filter((j) => j.workerId === waiter.workerId && j.status === "running").length +
      instances.filter((r) => r.workerId === waiter.workerId && r.status === "running").length;
    if (waiter.wants + running + (held.get(waiter.workerId) ?? 0) > worker.maxConcurrentJobs) {
      problems.push(`${where} wants ${waiter.wants} with ${running} running and ${held.get(waiter.workerId) ?? 0} offered, max ${worker.maxConcurrentJobs}`);
    }
    if (waiter.wants > 0) {
      const caps = new Set(waiter.capabilities);
      for (const lane of lanes) {
        if (lane.orgId !== waiter.orgId || !lane.capabilities.every((c) => caps.has(c)) || !meetsClass(worker.facts, lane.requirements)) continue;
        if (!laneWaiters.some((r) => r.laneId === lane._id && r.workerId === waiter.workerId)) {
          problems.push(`${where} waits but is missing from lane "${lane.routingKey}"'s line`);
        }
      }
    }
  }
  for (const row of laneWaiters) {
    const where = `lane waiter ${row._id} (worker ${row.workerId})`;
    const lane = lanesById.get(row.laneId);
    const waiter = waiterOf.get(row.workerId);
    if (!lane) problems.push(`${where}: its lane is missing`);
    else if (lane.orgId !== row.orgId) problems.push(`${where}: in another org than its lane`);
    if (!waiter || waiter.wants <= 0) problems.push(`${where}: the worker wants nothing`);
    else if (waiter.since !== row.since) problems.push(`${where}: since ${row.since}, the worker's is ${waiter.since}`);
    if (waiter && lane && !lane.capabilities.every((c) => waiter.capabilities.includes(c))) {
      problems.push(`${where}: the worker cannot serve lane "${lane.routingKey}"`);
    }
  }

  for (const state of dispatchStates) {
    if (state.scheduled) continue;
    const orgLanes = lanes.filter((l) => l.orgId === state.orgId);
    const ready = (laneId: string) => jobs.some((j) => j.laneId === laneId && j.status === "pending" && j.queue === "ready");
    // a ready replicated job waits for a worker that may run it (trust/validation.ts mayRun); any job for one that may
    // still download it (a worker on a metered connection, queue/downloadBytes.ts)
    const readyFor = (laneId: string, workerId: string) => {
      const worker = workersById.get(workerId);
      const left = waiterOf.get(workerId)?.bytesLeft;
      const held = (j: Doc<"jobs">) => j.clientKeyId !== undefined && atLimit.has(j.clientKeyId);
      return jobs.some(
        (j) =>
          j.laneId === laneId &&
          j.status === "pending" &&
          j.queue === "ready" &&
          !held(j) &&
          (!worker || mayRun(j, worker)) &&
          (left === undefined || downloadSize(j, appVersions) <= left),
      );
    };
    for (const lane of orgLanes) {
      if (laneWaiters.some((r) => r.laneId === lane._id && readyFor(lane._id, r.workerId))) {
        problems.push(`the idle dispatcher left a ready job in lane "${lane.routingKey}" while a worker waits there`);
      }
    }
    if (!state.readyJobs && orgLanes.some((l) => ready(l._id))) problems.push(`org ${state.orgId}: dispatcher idle, says no ready jobs, but there are`);
    if (!state.waiters && waiters.some((w) => w.orgId === state.orgId && w.wants > 0)) {
      problems.push(`org ${state.orgId}: dispatcher idle, says nobody waits, but somebody does`);
    }
  }
  return problems;
}

/**
 * The result cache: each entry has exactly one result row and a source job of its org that ran (not a hit itself),
 * each result row its entry; a cache hit names the job it took its result from and never waits.
 */
function checkCache(jobs: Array<Doc<"jobs">>, entries: Array<Doc<"cacheEntries">>, results: Array<Doc<"cacheResults">>, orgIds: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const resultsOf = new Map<string, number>();
  for (const row of results) resultsOf.set(row.entryId, (resultsOf.get(row.entryId) ?? 0) + 1);
  const entryIds = new Set(entries.map((e) => e._id as string));
  const jobsById = new Map(jobs.map((j) => [j._id as string, j]));
  const keys = new Set<string>();
  for (const entry of entries) {
    const where = `cache entry ${entry._id}`;
    if (!orgIds.has(entry.orgId)) problems.push(`${where} belongs to a missing org`);
    if ((resultsOf.get(entry._id) ?? 0) !== 1) problems.push(`${where} has ${resultsOf.get(entry._id) ?? 0} result rows`);
    if (keys.has(`${entry.orgId}:${entry.key}`)) problems.push(`${where} repeats its key`);
    keys.add(`${entry.orgId}:${entry.key}`);
    const source = jobsById.get(entry.sourceJobId);
    // a source deleted by retention may leave its entry until the entry expires
    if (source && (source.cachedFrom !== undefined || source.cache?.key !== entry.key || source.orgId !== entry.orgId)) problems.push(`${where}: its source job is not the job that ran it`);
  }
  for (const row of results) if (!entryIds.has(row.entryId)) problems.push(`cache result ${row._id} has no entry`);
  for (const job of jobs) {
    if (job.cachedFrom !== undefined && (job.status !== "succeeded" || job.cacheWaitsOn !== undefined)) problems.push(`job ${job._id} is a cache hit but ${job.status}`);
    if (job.cacheWaitsOn !== undefined && job.status !== "waiting") problems.push(`job ${job._id} (${job.status}) still waits on ${job.cacheWaitsOn}`);
  }
  return problems;
}
