import type { Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { jobFilter } from "../schema";
import { fail } from "../core/errors";
import { LIMITS } from "../core/limits";
import { checkText } from "../core/validate";
import { checkFairnessKey } from "./fairLimits";

export type JobFilter = Infer<typeof jobFilter>;

type Field = "status" | "type" | "batchId" | "externalId" | "clientKeyId" | "fairnessKey";

export function checkJobFilter(filter: JobFilter): JobFilter {
  if (filter.type !== undefined) checkText(filter.type, "type", LIMITS.typeChars);
  if (filter.batchId !== undefined) checkText(filter.batchId, "batchId", LIMITS.batchIdChars);
  if (filter.externalId !== undefined) checkText(filter.externalId, "externalId", LIMITS.externalIdChars);
  if (filter.fairnessKey !== undefined) checkFairnessKey(filter.fairnessKey);
  for (const name of ["from", "to"] as const) {
    const at = filter[name];
    if (at !== undefined && !(Number.isFinite(at) && at >= 0)) fail("invalid_argument", `${name} must be a time in ms since the epoch`);
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
    fail("invalid_argument", "from must not be after to");
  }
  return filter;
}

/**
 * How a filter is served: the index that narrows it (status with at most one other field, a client key with its
 * fairness key, or one field alone; the submitted-time range always), and the fields left to check on each page
 * (`checked`). With
 * such fields a page is the index's page with the non-matching jobs left out: it may hold fewer jobs than
 * asked for, even none, while more match further on (`isDone` says when the index range is over).
 */
export type JobQueryPlan = { index: string; checked: Field[]; matches: (job: Doc<"jobs">) => boolean };

type TimeBounded = { gte(field: "_creationTime", value: number): TimeBounded; lt(field: "_creationTime", value: number): TimeBounded };

/** The submitted-time bounds on an index range whose equality fields are set (every job index ends with _creationTime). */
function withinTime<Q>(q: Q, filter: JobFilter): Q {
  // Convex's range builders change type after each bound; the two bounds are applied in the order it allows.
  let range = q as unknown as TimeBounded;
  if (filter.from !== undefined) range = range.gte("_creationTime", filter.from);
  if (filter.to !== undefined) range = range.lt("_creationTime", filter.to);
  return range as unknown as Q;
}

/** A client key id no key has: the filter's client key when it names none. */
const NO_CLIENT_KEY = "0" as Id<"clientKeys">;

/** The ordered (newest first) query serving this filter within one org, and what is left to check per page. */
export function planJobQuery(ctx: QueryCtx, orgId: Id<"orgs">, filter: JobFilter) {
  const jobs = ctx.db.query("jobs");
  const { status, type, batchId, externalId, fairnessKey } = filter;
  // an id that is not a client key's names none: the same index range, found empty (never another org's jobs)
  const clientKeyId = filter.clientKeyId === undefined ? undefined : (ctx.db.normalizeId("clientKeys", filter.clientKeyId) ?? NO_CLIENT_KEY);
  let index: string;
  let served: Field[];
  let query;
  if (externalId !== undefined) {
    index = "by_org_external";
    served = ["externalId"];
    query = jobs.withIndex("by_org_external", (q) => withinTime(q.eq("orgId", orgId).eq("externalId", externalId), filter));
  } else if (batchId !== undefined) {
    index = "by_org_batch";
    served = ["batchId"];
    query = jobs.withIndex("by_org_batch", (q) => withinTime(q.eq("orgId", orgId).eq("batchId", batchId), filter));
  } else if (clientKeyId !== undefined && fairnessKey !== undefined) {
    index = "by_org_client_fairness";
    served = ["clientKeyId", "fairnessKey"];
    query = jobs.withIndex("by_org_client_fairness", (q) => withinTime(q.eq("orgId", orgId).eq("clientKeyId", clientKeyId).eq("fairnessKey", fairnessKey), filter));
  } else if (clientKeyId !== undefined) {
    index = "by_org_client";
    served = ["clientKeyId"];
    query = jobs.withIndex("by_org_client", (q) => withinTime(q.eq("orgId", orgId).eq("clientKeyId", clientKeyId), filter));
  } else if (status !== undefined && type !== undefined) {
    index = "by_org_status_type";
    served = ["status", "type"];
    query = jobs.withIndex("by_org_status_type", (q) => withinTime(q.eq("orgId", orgId).eq("status", status).eq("type", type), filter));
  } else if (status !== undefined) {
    index = "by_org_status_created";
    served = ["status"];
    query = jobs.withIndex("by_org_status_created", (q) => withinTime(q.eq("orgId", orgId).eq("status", status), filter));
  } else if (type !== undefined) {
    index = "by_org_type";
    served = ["type"];
    query = jobs.withIndex("by_org_type", (q) => withinTime(q.eq("orgId", orgId).eq("type", type), filter));
  } else {
    index = "by_org";
    served = [];
    query = jobs.withIndex("by_org", (q) => withinTime(q.eq("orgId", orgId), filter));
  }
  const checked = (["status", "type", "batchId", "externalId", "clientKeyId", "fairnessKey"] as const).filter((f) => filter[f] !== undefined && !served.includes(f));
  const matches = (job: Doc<"jobs">) => checked.every((f) => (f === "clientKeyId" ? job.clientKeyId === clientKeyId : job[f] === filter[f]));
  const plan: JobQueryPlan = { index, checked, matches };
  return { query: query.order("desc"), plan };
}

/** One row of the console's job table (no payload or result: those are on the job's page). */
export function jobRow(job: Doc<"jobs">) {
  return {
    jobId: job._id,
    type: job.type,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    workerId: job.workerId,
    externalId: job.externalId,
    batchId: job.batchId,
    // the client key it counts against (none: a host app's own job) and its fairness key
    clientKeyId: job.clientKeyId,
    fairnessKey: job.fairnessKey,
    progress: job.progress,
    cancelRequested: job.cancelRequested === true,
    error: job.error?.slice(0, LIMITS.summaryErrorChars),
    createdAt: job._creationTime,
    availableAt: job.availableAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    // frozen on its worker since then (the donor came back): the lease holds while its heartbeats say so
    suspendedSince: job.suspendedSince,
  };
}
