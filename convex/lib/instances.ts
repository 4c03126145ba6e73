import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { addCredit, creditFor } from "./credit";
import { sha256Hex } from "./keys";
import { canonicalJson, TRUST, type JobValidation } from "./validation";
import { acceptAlone, noteChecked, streakRow } from "./validationTrust";

/**
 * The instances of a replicated job (lib/validation.ts): one row per run, written when it starts (claim),
 * when it ends, and when the job's results are judged. Only jobs with `validation` ever reach this file.
 */

export async function instancesOf(ctx: QueryCtx, jobId: Id<"jobs">, round: number): Promise<Doc<"jobInstances">[]> {
  return await ctx.db
    .query("jobInstances")
    .withIndex("by_job", (q) => q.eq("jobId", jobId).eq("round", round))
    .take(4 * TRUST.maxInstances);
}

/** A worker starts the next instance (in the claim): its row, and the job's validation as it now stands. */
export async function startInstance(ctx: MutationCtx, job: Doc<"jobs">, rules: JobValidation, workerId: Id<"workers">, leaseId: string, now: number): Promise<JobValidation> {
  const worker = (await ctx.db.get(workerId))!;
  const started = rules.started + 1;
  await ctx.db.insert("jobInstances", {
    orgId: job.orgId,
    jobId: job._id,
    type: job.type,
    round: rules.round,
    n: started,
    workerId,
    workerName: worker.name,
    machineId: worker.machineId,
    leaseId,
    status: "running",
    startedAt: now,
  });
  const next: JobValidation = { ...rules, started };
  if (rules.homogeneous && !rules.platform && worker.facts) next.platform = { os: worker.facts.os, arch: worker.facts.arch };
  return next;
}

/** The instance running under the job's current lease (what an output chunk of a replicated job is tagged with). */
export async function runningInstance(ctx: QueryCtx, job: Doc<"jobs">): Promise<Doc<"jobInstances"> | null> {
  if (!job.validation || !job.leaseId) return null;
  const rows = await instancesOf(ctx, job._id, job.validation.round);
  return rows.find((r) => r.leaseId === job.leaseId && r.status === "running") ?? null;
}

/** The running instance stopped without a result (failed, released, lease expired, worker revoked, canceled). */
export async function endRunningInstance(ctx: MutationCtx, job: Doc<"jobs">, status: "failed" | "canceled"): Promise<void> {
  const row = await runningInstance(ctx, job);
  if (row) await ctx.db.patch(row._id, { status, endedAt: Date.now() });
}

/** Instances still waiting for their credit when the job ends without a verdict earn nothing, and say why. */
export async function denyPendingCredit(ctx: MutationCtx, job: Doc<"jobs">, note: string): Promise<void> {
  if (!job.validation) return;
  for (const row of await instancesOf(ctx, job._id, job.validation.round)) {
    if (row.credit === "pending") await ctx.db.patch(row._id, { credit: "denied", creditNote: note });
  }
}

export type Judgement =
  | { kind: "canceled" }
  | { kind: "valid"; result: unknown; agreeing: number }
  | { kind: "no_quorum"; distinct: number; completed: number }
  | { kind: "another"; completed: number };

/**
 * The worker's result for its instance: kept (hashed), then judged with the others of this round. Returns
 * what the job does next; the instances, credit and trust are already settled when it does. Results of
 * workers revoked meanwhile (or gone) no longer count.
 */
export async function completeInstance(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  result: unknown,
  cpuMs: number | undefined,
): Promise<Judgement> {
  const rules = job.validation!;
  const now = Date.now();
  const credit = creditFor(job, worker, cpuMs, now);
  const resultHash = await sha256Hex(canonicalJson(result));
  const rows = await instancesOf(ctx, job._id, rules.round);
  const mine = rows.find((r) => r.leaseId === job.leaseId);
  if (!mine) throw new Error(`replicated job ${job._id} has no instance for its lease`);
  const hashSeen = rows.some((r) => r.resultHash === resultHash && r.result !== undefined);
  const ended = {
    status: "completed" as const,
    endedAt: now,
    resultHash,
    credit: "pending" as const,
    creditCpuMs: credit.cpuMs,
    creditMeasured: credit.measured,
    ...(hashSeen ? {} : { result }),
  };
  await ctx.db.patch(mine._id, ended);
  Object.assign(mine, ended);
  // never offered to this worker or machine again in this round
  await ctx.db.patch(job._id, {
    validation: { ...rules, workers: [...rules.workers, worker._id], machines: [...rules.machines, worker.machineId] },
  });
  if (job.cancelRequested) return { kind: "canceled" };

  const completed: Array<{ row: Doc<"jobInstances">; worker: Doc<"workers"> | null }> = [];
  for (const row of rows) {
    if (row.status !== "completed") continue;
    const owner = row.workerId === worker._id ? worker : await ctx.db.get(row.workerId);
    completed.push({ row, worker: owner });
  }
  const counted = completed.filter((c) => c.worker !== null && !c.worker.revoked);

  if (rules.adaptive && completed.length === 1 && rules.started === 1) {
    const streak = (await streakRow(ctx, worker._id, job.type))?.streak ?? 0;
    if (acceptAlone(streak)) {
      await grant(ctx, mine, worker, now);
      await ctx.db.patch(mine._id, { valid: true, alone: true });
      return { kind: "valid", result, agreeing: 1 };
    }
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
    return { kind: "valid", result, agreeing: agreeing.length };
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
  return {
    pending: { cpuHours: pending.reduce((sum, r) => sum + (r.creditCpuMs ?? 0), 0) / 3_600_000, jobs: pending.length },
    denied: denied.map((r) => ({ jobId: r.jobId, type: r.type, why: r.creditNote ?? "not validated" })),
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
