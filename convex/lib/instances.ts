import { internal } from "../_generated/api";
import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { bumpLane, noteMetrics } from "./counters";
import { addCredit, creditFor } from "./credit";
import { kickForJobs, kickSummary } from "./kick";
import { LIMITS } from "./limits";
import { moveOf, verdictsOf } from "./metrics/moves";
import { cancelIfPending } from "./scheduled";
import { dropProgressLead } from "./instanceProgress";
import { addRunning } from "./workerSlots";
import { sha256Hex } from "./keys";
import { canonicalJson, TRUST, type JobValidation } from "./validation";
import { acceptAlone, noteChecked, streakRow } from "./validationTrust";

/**
 * The instances of a replicated job (lib/validation.ts): one row per run, side by side, each under its own
 * lease, written when it starts (claim), when it ends, and when the job's results are judged. Only jobs with `validation` ever reach this file.
 */

export async function instancesOf(ctx: QueryCtx, jobId: Id<"jobs">, round: number): Promise<Doc<"jobInstances">[]> {
  return await ctx.db
    .query("jobInstances")
    .withIndex("by_job", (q) => q.eq("jobId", jobId).eq("round", round))
    .take(4 * TRUST.maxInstances);
}

/**
 * How many more instances this job wants started now: enough that, if the running ones and the new ones all
 * agree with the largest agreeing group, `quorum` is reached, never past `maxInstances` results; one in all
 * for a job accepted alone. Results of workers revoked meanwhile (or gone) do not count.
 */
export async function wantedMore(ctx: QueryCtx, rules: JobValidation, rows: Doc<"jobInstances">[]): Promise<number> {
  const running = rows.filter((r) => r.status === "running").length;
  const completed: Doc<"jobInstances">[] = [];
  for (const r of rows) {
    if (r.status !== "completed") continue;
    const owner = await ctx.db.get(r.workerId);
    if (owner && !owner.revoked) completed.push(r);
  }
  if (rules.alone) return completed.length > 0 ? 0 : 1 - running;
  const groups = new Map<string, number>();
  for (const r of completed) groups.set(r.resultHash!, (groups.get(r.resultHash!) ?? 0) + 1);
  const best = Math.max(0, ...groups.values());
  return Math.min(rules.quorum - best, rules.maxInstances - completed.length) - running;
}

/**
 * A worker starts an instance (in the claim), under a lease of its own with its own lease check; its worker and
 * machine are recorded at once, so neither gets a second instance of this round. With `adaptive`, the first
 * live instance tosses the coin of adaptive trust for its worker. Returns the job's validation as it now
 * stands, and how many more instances it still wants (the job then stays ready for them).
 */
export async function startInstance(ctx: MutationCtx, job: Doc<"jobs">, worker: Doc<"workers">, leaseId: string, now: number): Promise<{ rules: JobValidation; more: number }> {
  const rules = job.validation!;
  const rows = await instancesOf(ctx, job._id, rules.round);
  const leaseExpiresAt = now + job.leaseMs;
  const leaseCheck = await ctx.scheduler.runAt(leaseExpiresAt, internal.janitor.checkInstanceLease, { leaseId });
  const row = {
    orgId: job.orgId,
    jobId: job._id,
    type: job.type,
    round: rules.round,
    n: rules.started + 1,
    workerId: worker._id,
    workerName: worker.name,
    machineId: worker.machineId,
    leaseId,
    status: "running" as const,
    startedAt: now,
    leaseExpiresAt,
    leaseCheck,
  };
  const instanceId = await ctx.db.insert("jobInstances", row);
  // each running instance holds a worker slot and does the whole work: it counts as running in its lane
  await bumpLane(ctx, job, { running: 1 });
  const next: JobValidation = { ...rules, started: rules.started + 1, workers: [...rules.workers, worker._id], machines: [...rules.machines, worker.machineId] };
  if (rules.homogeneous && !rules.platform && worker.facts) next.platform = { os: worker.facts.os, arch: worker.facts.arch };
  if (rules.adaptive && !rows.some((r) => r.status === "running" || r.status === "completed")) {
    const streak = (await streakRow(ctx, worker._id, job.type))?.streak ?? 0;
    if (acceptAlone(streak)) next.alone = true;
    else delete next.alone;
  }
  const more = await wantedMore(ctx, next, [...rows, { ...row, _id: instanceId, _creationTime: now }]);
  return { rules: next, more };
}

/** The instance a lease names, by its lease. */
export async function instanceOfLease(ctx: QueryCtx, leaseId: string): Promise<Doc<"jobInstances"> | null> {
  return await ctx.db
    .query("jobInstances")
    .withIndex("by_lease", (q) => q.eq("leaseId", leaseId))
    .unique();
}

/**
 * A replicated job follows what it wants: back to ready while it wants more instances than run (the dispatcher
 * offers it again), running (leaseless: its instances hold the leases) once every wanted instance runs. In its
 * lane's counts it is pending while ready; running, it counts nothing itself (its running instances count).
 */
export async function settleReplica(ctx: MutationCtx, jobId: Id<"jobs">): Promise<void> {
  const job = (await ctx.db.get(jobId))!;
  const ready = job.status === "pending" && job.queue === "ready";
  if (job.status !== "running" && !ready) return;
  const more = await wantedMore(ctx, job.validation!, await instancesOf(ctx, job._id, job.validation!.round));
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
}

/**
 * A running instance stopped without a result (failed, released, lease expired, worker revoked): its lease
 * and its worker's slot are freed, and its worker and machine may run the job again.
 */
export async function stopInstance(ctx: MutationCtx, job: Doc<"jobs">, row: Doc<"jobInstances">, options: { fromLeaseCheck?: boolean } = {}): Promise<void> {
  if (row.leaseCheck && !options.fromLeaseCheck) await cancelIfPending(ctx, row.leaseCheck);
  await ctx.db.patch(row._id, { status: "failed", endedAt: Date.now(), leaseExpiresAt: undefined, leaseCheck: undefined });
  await addRunning(ctx, row.orgId, row.workerId, -1);
  await bumpLane(ctx, job, { running: -1 });
  await dropProgressLead(ctx, job, row);
  const rules = job.validation!;
  if (row.round !== rules.round) return;
  await ctx.db.patch(job._id, {
    validation: { ...rules, workers: rules.workers.filter((w) => w !== row.workerId), machines: rules.machines.filter((m) => m !== row.machineId) },
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

/**
 * The worker of a canceled instance answered (fail, complete or release; or its lease ran out): its cancel
 * notice goes, and an instance canceled at quorum earns its reported CPU time (clamped as any attempt's), at
 * most the agreeing instances' least: being slow never pays more than finishing.
 */
export async function settleCanceled(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  row: Doc<"jobInstances">,
  report: { worker: Doc<"workers">; cpuMs: number | undefined } | null,
  options: { fromLeaseCheck?: boolean } = {},
): Promise<void> {
  if (row.leaseCheck && !options.fromLeaseCheck) await cancelIfPending(ctx, row.leaseCheck);
  await ctx.db.patch(row._id, { reported: true, leaseCheck: undefined });
  const notices = await ctx.db
    .query("inbox")
    .withIndex("by_worker_kind", (q) => q.eq("workerId", row.workerId).eq("kind", "cancel"))
    .take(LIMITS.inboxRows);
  for (const notice of notices) if (notice.jobId === row.jobId) await ctx.db.delete(notice._id);
  if (!report || !row.atQuorum) return;
  const now = Date.now();
  const credit = creditFor({ ...job, startedAt: row.startedAt }, report.worker, report.cpuMs, now);
  const cpuMs = Math.min(credit.cpuMs, row.capMs ?? 0);
  await addCredit(ctx, report.worker, { cpuMs, measured: credit.measured }, "canceledAtQuorum", now);
  await ctx.db.patch(row._id, { credit: "granted", creditCpuMs: cpuMs, creditMeasured: credit.measured, creditNote: "canceled at quorum" });
}

/** Instances still waiting for their credit when the job ends without a verdict earn nothing, and say why. */
export async function denyPendingCredit(ctx: MutationCtx, job: Doc<"jobs">, note: string): Promise<void> {
  if (!job.validation) return;
  for (const row of await instancesOf(ctx, job._id, job.validation.round)) {
    if (row.credit === "pending") await ctx.db.patch(row._id, { credit: "denied", creditNote: note });
  }
}

export type Judgement =
  | { kind: "valid"; result: unknown; agreeing: number; capMs: number }
  | { kind: "no_quorum"; distinct: number; completed: number }
  | { kind: "another"; completed: number };

/**
 * The worker's result for its instance: kept (hashed), then judged with the others of this round. Returns
 * what the job does next; the instances, credit and trust are already settled when it does (instances still
 * running are the caller's). Results of workers revoked meanwhile (or gone) no longer count.
 */
export async function completeInstance(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  mine: Doc<"jobInstances">,
  worker: Doc<"workers">,
  result: unknown,
  cpuMs: number | undefined,
): Promise<Judgement> {
  const rules = job.validation!;
  const now = Date.now();
  const credit = creditFor({ ...job, startedAt: mine.startedAt }, worker, cpuMs, now);
  const resultHash = await sha256Hex(canonicalJson(result));
  const rows = await instancesOf(ctx, job._id, rules.round);
  const hashSeen = rows.some((r) => r.resultHash === resultHash && r.result !== undefined);
  const ended = {
    status: "completed" as const,
    endedAt: now,
    resultHash,
    credit: "pending" as const,
    creditCpuMs: credit.cpuMs,
    creditMeasured: credit.measured,
    leaseExpiresAt: undefined,
    leaseCheck: undefined,
    ...(hashSeen ? {} : { result }),
  };
  if (mine.leaseCheck) await cancelIfPending(ctx, mine.leaseCheck);
  await ctx.db.patch(mine._id, ended);
  await addRunning(ctx, mine.orgId, worker._id, -1);
  await bumpLane(ctx, job, { running: -1 });
  await dropProgressLead(ctx, job, mine);
  const row = rows.find((r) => r._id === mine._id)!;
  Object.assign(row, ended);

  const completed: Array<{ row: Doc<"jobInstances">; worker: Doc<"workers"> | null }> = [];
  for (const r of rows) {
    if (r.status !== "completed") continue;
    const owner = r.workerId === worker._id ? worker : await ctx.db.get(r.workerId);
    completed.push({ row: r, worker: owner });
  }
  const counted = completed.filter((c) => c.worker !== null && !c.worker.revoked);

  if (rules.alone && completed.length === 1) {
    await grant(ctx, row, worker, now);
    await ctx.db.patch(row._id, { valid: true, alone: true });
    await noteMetrics(ctx, job.orgId, { verdicts: { valid: 1 } });
    return { kind: "valid", result, agreeing: 1, capMs: credit.cpuMs };
  }

  const agreeing = counted.filter((c) => c.row.resultHash === resultHash);
  if (agreeing.length >= rules.quorum) {
    for (const c of completed) {
      if (c.row.credit !== "pending") continue;
      if (c.worker === null || c.worker.revoked) {
        await ctx.db.patch(c.row._id, { credit: "denied", creditNote: "worker revoked before its result was validated" });
        continue;
      }
      const valid = c.row.resultHash === resultHash;
      await ctx.db.patch(c.row._id, { valid });
      await noteChecked(ctx, c.worker, job.type, valid);
      if (valid) await grant(ctx, c.row, c.worker, now);
      else {
        await ctx.db.patch(c.row._id, {
          credit: "denied",
          creditNote: `invalid: its result differed from the one ${agreeing.length} other machines agreed on`,
        });
      }
    }
    await noteMetrics(ctx, job.orgId, { verdicts: verdictsOf(completed.filter((c) => c.row.credit === "pending" && c.worker && !c.worker.revoked).map((c) => c.row.resultHash === resultHash)) });
    return { kind: "valid", result, agreeing: agreeing.length, capMs: Math.min(...agreeing.map((c) => c.row.creditCpuMs ?? 0)) };
  }

  const groups = new Map<string, number>();
  for (const c of counted) groups.set(c.row.resultHash!, (groups.get(c.row.resultHash!) ?? 0) + 1);
  const best = Math.max(0, ...groups.values());
  const left = rules.maxInstances - counted.length;
  if (left <= 0 || best + left < rules.quorum) {
    const distinct = new Set(completed.map((c) => c.row.resultHash)).size;
    for (const c of completed) {
      if (c.row.credit === "pending") {
        await ctx.db.patch(c.row._id, { credit: "denied", creditNote: `no quorum: ${distinct} different results from ${completed.length} instances` });
      }
    }
    await noteMetrics(ctx, job.orgId, { verdicts: { no_quorum: completed.filter((c) => c.row.credit === "pending").length } });
    return { kind: "no_quorum", distinct, completed: completed.length };
  }
  return { kind: "another", completed: counted.length };
}

async function grant(ctx: MutationCtx, row: Doc<"jobInstances">, worker: Doc<"workers">, now: number) {
  await addCredit(ctx, worker, { cpuMs: row.creditCpuMs ?? 0, measured: row.creditMeasured ?? false }, "completed", now);
  await ctx.db.patch(row._id, { credit: "granted", creditNote: undefined });
}

/** jobs:get's `validation`: the state, the quorum and this round's instances (and, without a quorum, every distinct result). */
export async function validationView(ctx: QueryCtx, job: Doc<"jobs">) {
  const rules = job.validation;
  if (!rules) return { state: "single" as const, quorum: 1, instances: [] };
  const rows = await instancesOf(ctx, job._id, rules.round);
  const state: "validating" | "valid" | "no_quorum" = rules.outcome ?? "validating";
  const instances = rows.map((r) => ({
    workerName: r.workerName,
    status: r.status,
    ...(r.status === "running" && r.progress !== undefined ? { progress: r.progress } : {}),
    ...(r.resultHash !== undefined ? { resultHash: r.resultHash } : {}),
    ...(r.valid !== undefined ? { valid: r.valid } : {}),
    ...(r.credit !== undefined ? { credit: r.credit } : {}),
    ...(r.creditNote !== undefined ? { creditNote: r.creditNote } : {}),
  }));
  const view = { state, quorum: rules.quorum, maxInstances: rules.maxInstances, round: rules.round, instances };
  if (state !== "no_quorum") return view;
  const results = rows.filter((r) => r.result !== undefined).map((r) => ({ resultHash: r.resultHash!, result: r.result as unknown, count: rows.filter((o) => o.resultHash === r.resultHash).length }));
  return { ...view, results };
}

/** A donor's credit waiting for validation, and its results that earned nothing (latest first), for myCredit. */
export async function pendingCreditOf(ctx: QueryCtx, workerId: Id<"workers">) {
  const pending = await ctx.db
    .query("jobInstances")
    .withIndex("by_worker_credit", (q) => q.eq("workerId", workerId).eq("credit", "pending"))
    .take(500);
  const denied = await ctx.db
    .query("jobInstances")
    .withIndex("by_worker_credit", (q) => q.eq("workerId", workerId).eq("credit", "denied"))
    .order("desc")
    .take(20);
  const canceled = await ctx.db
    .query("jobInstances")
    .withIndex("by_worker_status", (q) => q.eq("workerId", workerId).eq("status", "canceled"))
    .order("desc")
    .take(20);
  return {
    pending: { cpuHours: pending.reduce((sum, r) => sum + (r.creditCpuMs ?? 0), 0) / 3_600_000, jobs: pending.length },
    denied: denied.map((r) => ({ jobId: r.jobId, type: r.type, why: r.creditNote ?? "not validated" })),
    // instances still running when their job reached its quorum (latest first): what their reported CPU time earned
    canceledAtQuorum: canceled
      .filter((r) => r.atQuorum)
      .map((r) => ({ jobId: r.jobId, type: r.type, cpuHours: r.credit === "granted" ? (r.creditCpuMs ?? 0) / 3_600_000 : 0, credit: r.credit ?? "denied" })),
  };
}

/**
 * A replicated job's output chunks, one section per instance that wrote them (in the order each first wrote),
 * named by instance number, round and worker; chunks of no instance (none expected) under instance 0.
 */
export async function outputPerInstance(ctx: QueryCtx, chunks: Array<Pick<Doc<"jobOutput">, "chunk" | "instance">>) {
  const sections = new Map<string, { instance: number; round: number; workerName: string; text: string }>();
  for (const c of chunks) {
    const key = c.instance ?? "";
    let section = sections.get(key);
    if (!section) {
      const row = c.instance ? await ctx.db.get(c.instance) : null;
      section = { instance: row?.n ?? 0, round: row?.round ?? 0, workerName: row?.workerName ?? "", text: "" };
      sections.set(key, section);
    }
    section.text += c.chunk;
  }
  return [...sections.values()];
}
