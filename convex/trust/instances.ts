import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { bumpLane, kickForJobs, kickSummary, cancelIfPending, addRunning } from "../lanes/entry";
import { fixedDeadlineMs } from "./instanceDeadline";
import { dropProgressLead } from "./instanceProgress";
import { LIMITS } from "../core/limits";
import { moveOf } from "../observability/entry";
import { donorKey, ROUND_ROWS, type JobValidation } from "./validation";
import { acceptAlone, streakRow } from "./validationTrust";

/**
 * The instances of a replicated job (trust/validation.ts): one row per run, side by side, each under its own
 * lease, written when it starts (claim), when it ends, and when the job's results are judged. Only jobs with
 * `validation` ever reach this file. A failed instance is one error result of its round (BOINC's error result):
 * its worker, machine and donor stay excluded; an instance given back (released) casts no vote.
 */

export type Instance = Doc<"jobInstances">;

export async function instancesOf(ctx: QueryCtx, jobId: Id<"jobs">, round: number): Promise<Instance[]> {
  return await ctx.db
    .query("jobInstances")
    .withIndex("by_job", (q) => q.eq("jobId", jobId).eq("round", round))
    .take(ROUND_ROWS);
}

/** The instance a lease names, by its lease. */
export async function instanceOfLease(ctx: QueryCtx, leaseId: string): Promise<Instance | null> {
  return await ctx.db
    .query("jobInstances")
    .withIndex("by_lease", (q) => q.eq("leaseId", leaseId))
    .unique();
}

/**
 * The round's results and failures that count: those of workers neither revoked nor gone (`known`: a worker
 * already read). A revoked worker's result no longer counts, nor does its failure. A failure always says its
 * error; "failed" rows without one were written before failures were votes (instances given back were "failed"
 * then too) and count for nothing.
 */
export async function countable(ctx: QueryCtx, rows: Instance[], known?: Doc<"workers">): Promise<{ completed: Instance[]; failed: Instance[] }> {
  const completed: Instance[] = [];
  const failed: Instance[] = [];
  for (const r of rows) {
    if (r.status !== "completed" && !(r.status === "failed" && r.error !== undefined)) continue;
    const owner = known?._id === r.workerId ? known : await ctx.db.get(r.workerId);
    if (!owner || owner.revoked) continue;
    (r.status === "completed" ? completed : failed).push(r);
  }
  return { completed, failed };
}

/** The size of the largest group of agreeing results. */
export function bestGroup(completed: Instance[]): number {
  const groups = new Map<string, number>();
  for (const r of completed) groups.set(r.resultHash!, (groups.get(r.resultHash!) ?? 0) + 1);
  return Math.max(0, ...groups.values());
}

/**
 * How many more instances this job wants started now: enough that, if the running ones and the new ones all
 * agree with the largest agreeing group, `quorum` is reached (plus `spare` more for latency), never past
 * `maxInstances` results; one in all for a job accepted alone. An instance past its deadline runs on but no
 * longer counts as running here: a replacement starts beside it.
 */
export function wanted(rules: JobValidation, rows: Instance[], completed: Instance[]): number {
  const active = rows.filter((r) => r.status === "running" && r.late !== true).length;
  if (rules.alone) return completed.length > 0 ? 0 : 1 - active;
  return Math.min(rules.quorum - bestGroup(completed) + (rules.spare ?? 0), rules.maxInstances - completed.length) - active;
}

export async function wantedMore(ctx: QueryCtx, rules: JobValidation, rows: Instance[]): Promise<number> {
  return wanted(rules, rows, (await countable(ctx, rows)).completed);
}

/**
 * A worker starts an instance (in the claim), under a lease of its own with its own lease check (at its
 * deadline too, when that is known now); its worker, machine and (distinct by donor) donor are recorded at once,
 * so none gets a second instance of this round. A worker that gave one back starts again on its own row. With
 * `adaptive`, the first live instance tosses the coin of adaptive trust for its worker. Returns the job's
 * validation as it now stands, and how many more instances it still wants (the job then stays ready for them).
 */
export async function startInstance(ctx: MutationCtx, job: Doc<"jobs">, worker: Doc<"workers">, leaseId: string, now: number): Promise<{ rules: JobValidation; more: number }> {
  const rules = job.validation!;
  const rows = await instancesOf(ctx, job._id, rules.round);
  const leaseExpiresAt = now + job.leaseMs;
  const deadlineMs = fixedDeadlineMs(job);
  const deadlineAt = deadlineMs === undefined ? undefined : now + deadlineMs;
  const leaseCheck = await ctx.scheduler.runAt(Math.min(leaseExpiresAt, deadlineAt ?? Infinity), internal.janitor.checkInstanceLease, { leaseId });
  const donor = rules.distinct === "donor" ? donorKey(worker) : undefined;
  const fields = {
    workerName: worker.name,
    machineId: worker.machineId,
    leaseId,
    status: "running" as const,
    startedAt: now,
    leaseExpiresAt,
    leaseCheck,
    ...(deadlineAt !== undefined ? { deadlineAt } : {}),
    ...(donor !== undefined ? { donorKey: donor } : {}),
  };
  const given = rows.find((r) => r.workerId === worker._id && r.status === "released");
  let row: Instance;
  if (given) {
    const restart = { ...fields, endedAt: undefined, late: undefined, progress: undefined, statusText: undefined, deadlineAt };
    await ctx.db.patch(given._id, restart);
    row = { ...given, ...restart };
  } else {
    const inserted = { orgId: job.orgId, jobId: job._id, type: job.type, round: rules.round, n: rules.started + 1, workerId: worker._id, ...fields };
    row = { ...inserted, _id: await ctx.db.insert("jobInstances", inserted), _creationTime: now };
  }
  // each running instance holds a worker slot and does the whole work: it counts as running in its lane
  await bumpLane(ctx, job, { running: 1 });
  const next: JobValidation = {
    ...rules,
    started: rules.started + (given ? 0 : 1),
    workers: [...rules.workers, worker._id],
    machines: [...rules.machines, worker.machineId],
    ...(donor !== undefined ? { donors: [...(rules.donors ?? []), donor] } : {}),
  };
  if (rules.homogeneous && !rules.platform && worker.facts) next.platform = { os: worker.facts.os, arch: worker.facts.arch };
  if (rules.adaptive && !rows.some((r) => r.status === "running" || r.status === "completed")) {
    const streak = (await streakRow(ctx, worker._id, job.type))?.streak ?? 0;
    if (acceptAlone(streak)) next.alone = true;
    else delete next.alone;
  }
  const more = await wantedMore(ctx, next, [...rows.filter((r) => r._id !== row._id), row]);
  return { rules: next, more };
}

/**
 * A replicated job follows what it wants: back to ready while it wants more instances than run (the dispatcher
 * offers it again), running (leaseless: its instances hold the leases) once every wanted instance runs. In its
 * lane's counts it is pending while ready; running, it counts nothing itself (its running instances count).
 * Returns "exhausted" when it wants more, none runs and its round may start no more (ROUND_ROWS): the caller ends it.
 */
export async function settleReplica(ctx: MutationCtx, jobId: Id<"jobs">): Promise<"exhausted" | undefined> {
  const job = (await ctx.db.get(jobId))!;
  const ready = job.status === "pending" && job.queue === "ready";
  if (job.status !== "running" && job.status !== "pending") return undefined;
  const rules = job.validation!;
  const rows = await instancesOf(ctx, job._id, rules.round);
  const more = await wantedMore(ctx, rules, rows);
  if (more > 0 && rules.started >= ROUND_ROWS && !rows.some((r) => r.status === "running")) return "exhausted";
  if (job.status === "running" && more > 0) {
    await ctx.db.patch(job._id, { status: "pending", queue: "ready" });
    await bumpLane(ctx, job, { pending: 1, jobs: moveOf(job, "pending") });
    await kickForJobs(ctx, job.orgId);
    await kickSummary(ctx, job.orgId);
  } else if (ready && more <= 0) {
    await ctx.db.patch(job._id, { status: "running", queue: undefined });
    await bumpLane(ctx, job, { pending: -1, jobs: moveOf(job, "running") });
    await kickSummary(ctx, job.orgId);
  }
  return undefined;
}

type Ending = Partial<Omit<Instance, "_id" | "_creationTime">>;

/**
 * A running instance ends (with a result, a failure or given back): its lease, lease check and worker slot are
 * freed. An instance that returned a result tells its lane how long it ran (observability/runTimes.ts).
 */
export async function endInstance(ctx: MutationCtx, job: Doc<"jobs">, row: Instance, ending: Ending, options: { fromLeaseCheck?: boolean } = {}): Promise<void> {
  if (row.leaseCheck && !options.fromLeaseCheck) await cancelIfPending(ctx, row.leaseCheck);
  const now = Date.now();
  await ctx.db.patch(row._id, { ...ending, endedAt: now, leaseExpiresAt: undefined, leaseCheck: undefined });
  await addRunning(ctx, row.orgId, row.workerId, -1);
  await bumpLane(ctx, job, { running: -1, ...(ending.status === "completed" ? { runMs: now - row.startedAt } : {}) });
  await dropProgressLead(ctx, job, row);
}

/** A running instance failed (its worker said so, or its lease ran out): one error result; its worker, machine and donor stay excluded. */
export async function failInstance(ctx: MutationCtx, job: Doc<"jobs">, row: Instance, error: string, options: { fromLeaseCheck?: boolean } = {}): Promise<void> {
  await endInstance(ctx, job, row, { status: "failed", error: error.slice(0, LIMITS.summaryErrorChars) }, options);
}

/** A running instance given back without a result (released, its worker revoked or gone): no vote; its worker, machine and donor may run the job again. */
export async function releaseInstance(ctx: MutationCtx, job: Doc<"jobs">, row: Instance): Promise<void> {
  await endInstance(ctx, job, row, { status: "released" });
  const rules = job.validation!;
  if (row.round !== rules.round) return;
  await ctx.db.patch(job._id, {
    validation: {
      ...rules,
      workers: rules.workers.filter((w) => w !== row.workerId),
      machines: rules.machines.filter((m) => m !== row.machineId),
      ...(rules.donors ? { donors: rules.donors.filter((d) => d !== row.donorKey) } : {}),
    },
  });
}

/**
 * Stop every running instance of the job's round: canceled, its worker's slot freed and its doorbell told (its
 * heartbeat answers cancel: true). `capMs`: canceled at quorum, so its worker's CPU time, once reported, is
 * credited up to that. Its lease check stays, to clear the notice if the worker never answers.
 */
export async function cancelRunningInstances(ctx: MutationCtx, job: Doc<"jobs">, note: string, capMs?: number): Promise<void> {
  const rules = job.validation!;
  let canceled = 0;
  for (const row of await instancesOf(ctx, job._id, rules.round)) {
    if (row.status !== "running") continue;
    canceled++;
    await ctx.db.patch(row._id, {
      status: "canceled",
      endedAt: Date.now(),
      credit: "denied",
      creditNote: capMs === undefined ? note : `${note}: credit once its CPU time is reported`,
      ...(capMs === undefined ? {} : { atQuorum: true, capMs }),
    });
    await addRunning(ctx, row.orgId, row.workerId, -1);
    await ctx.db.insert("inbox", { orgId: row.orgId, workerId: row.workerId, kind: "cancel", jobId: row.jobId });
    await dropProgressLead(ctx, job, row);
  }
  if (canceled > 0) await bumpLane(ctx, job, { running: -canceled });
}
