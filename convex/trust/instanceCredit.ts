import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { addCredit, addPendingCredit, creditFor, creditTotalOf } from "./credit";
import type { Credit } from "./creditSums";
import type { Instance } from "./instances";
import { instancesOf } from "./instances";
import { LIMITS } from "../core/limits";
import { cancelIfPending } from "../lanes/entry";

/**
 * A replicated job's credit, as BOINC grants it: a result waits (`pending`) until its job is judged; then every
 * valid instance is granted the same amount, the least of the agreeing instances' clamped claims, and the others
 * are denied with the reason. An instance canceled at quorum (a spare, or one past its deadline) earns its
 * reported CPU time up to that same amount. The worker's credit total keeps its pending sum, so the donor's
 * figure is exact however many results wait.
 */

type CreditPatch = Pick<Partial<Instance>, "credit" | "creditNote" | "creditCpuMs" | "creditMeasured" | "valid" | "alone">;

/** Change an instance's credit; a result that stops waiting leaves its worker's pending sum. */
export async function setCredit(ctx: MutationCtx, row: Instance, patch: CreditPatch): Promise<void> {
  await ctx.db.patch(row._id, patch);
  if (row.credit === "pending" && patch.credit !== undefined && patch.credit !== "pending") {
    await addPendingCredit(ctx, { _id: row.workerId, orgId: row.orgId }, -(row.creditCpuMs ?? 0), -1);
  }
}

/** A valid result earns `credit` (the agreeing instances' least claim, or its own when accepted alone). */
export async function grant(ctx: MutationCtx, row: Instance, credit: Credit, now: number, extra: CreditPatch = {}): Promise<void> {
  await addCredit(ctx, { _id: row.workerId, orgId: row.orgId }, credit, "completed", now);
  await setCredit(ctx, row, { ...extra, credit: "granted", creditCpuMs: credit.cpuMs, creditMeasured: credit.measured, creditNote: undefined });
}

/** What the agreeing instances are each granted: the least of their claims. */
export function leastClaim(agreeing: Instance[]): Credit {
  const least = agreeing.reduce((a, b) => ((b.creditCpuMs ?? 0) < (a.creditCpuMs ?? 0) ? b : a));
  return { cpuMs: least.creditCpuMs ?? 0, measured: least.creditMeasured ?? false };
}

/**
 * The worker of a canceled instance answered (fail, complete or release; or its lease ran out): its cancel
 * notice goes, and an instance canceled at quorum earns its reported CPU time (clamped as any attempt's), at
 * most the agreeing instances' least: being slow never pays more than finishing.
 */
export async function settleCanceled(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  row: Instance,
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
    if (row.credit === "pending") await setCredit(ctx, row, { credit: "denied", creditNote: note });
  }
}

/** A donor's credit waiting for validation, and its results that earned nothing (latest first), for myCredit. */
export async function pendingCreditOf(ctx: QueryCtx, workerId: Id<"workers">) {
  const total = await creditTotalOf(ctx, workerId);
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
    pending: { cpuHours: Math.max(0, total?.pendingCpuMs ?? 0) / 3_600_000, jobs: Math.max(0, total?.pendingJobs ?? 0) },
    denied: denied.map((r) => ({ jobId: r.jobId, type: r.type, why: r.creditNote ?? "not validated" })),
    // instances still running when their job reached its quorum (latest first): what their reported CPU time earned
    canceledAtQuorum: canceled
      .filter((r) => r.atQuorum)
      .map((r) => ({ jobId: r.jobId, type: r.type, cpuHours: r.credit === "granted" ? (r.creditCpuMs ?? 0) / 3_600_000 : 0, credit: r.credit ?? "denied" })),
  };
}
