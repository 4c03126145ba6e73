import { api } from "../../../convex/_generated/api";
import type { Doc, Id } from "../../../convex/_generated/dataModel";
import type { Enrolled, Farm } from "../setup";

/** A job that ran once and died (one real submit, claim and fail). */
export async function deadJob(farm: Farm, worker: Enrolled, spec: { type?: string; batchId?: string } = {}): Promise<Id<"jobs">> {
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: spec.type ?? "x", batchId: spec.batchId, maxAttempts: 1 });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
  await farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: claim.leaseId, error: "fatal", retryable: false });
  return jobId;
}

/**
 * `count` more dead letters like `template`, written straight into the database (with the counter change
 * the real path would make; the metrics do not count the copies), `perTransaction` at a time.
 */
export async function copyDeadJobs(farm: Farm, template: Id<"jobs">, count: number, perTransaction = 2_000): Promise<void> {
  const first = (await farm.t.run(async (ctx) => await ctx.db.get(template)))!;
  const fields: Omit<Doc<"jobs">, "_id" | "_creationTime"> & { _id?: unknown; _creationTime?: unknown } = { ...first };
  delete fields._id;
  delete fields._creationTime;
  for (let done = 0; done < count; done += perTransaction) {
    const n = Math.min(perTransaction, count - done);
    await farm.t.run(async (ctx) => {
      for (let i = 0; i < n; i++) await ctx.db.insert("jobs", { ...fields, metered: undefined });
      await ctx.db.insert("counterDeltas", { orgId: farm.orgId, dead: n });
    });
  }
}

/** Every job of the org, straight from the database (what a filter should find). */
export async function allJobs(farm: Farm) {
  return (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter((j) => j.orgId === farm.orgId);
}
