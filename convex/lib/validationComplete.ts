import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { completeInstance } from "./instances";
import { finishJob, requeue } from "./transitions";

/**
 * workers:complete for an instance of a replicated job: the result is judged with the others, then the job
 * succeeds with the agreed result, ends canceled (cancel requested meanwhile), goes dead with `no_quorum`,
 * or goes back to its lane (at its place: its availableAt is unchanged) for another instance elsewhere.
 */
export async function completeReplica(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  worker: Doc<"workers">,
  result: unknown,
  cpuMs: number | undefined,
): Promise<"succeeded" | "canceled" | "pending" | "dead"> {
  const judged = await completeInstance(ctx, job, worker, result, cpuMs);
  const rules = (await ctx.db.get(job._id))!.validation!;
  switch (judged.kind) {
    case "canceled":
      await finishJob(ctx, job, "canceled", { result, workerId: worker._id, detail: "completed after cancel" });
      return "canceled";
    case "valid":
      await ctx.db.patch(job._id, { progress: 1, validation: { ...rules, outcome: "valid" } });
      await finishJob(ctx, job, "succeeded", {
        result: judged.result,
        workerId: worker._id,
        detail: judged.agreeing === 1 ? "accepted alone: trusted worker (adaptive replication)" : `quorum: ${judged.agreeing} results agree`,
      });
      return "succeeded";
    case "no_quorum":
      await ctx.db.patch(job._id, { validation: { ...rules, outcome: "no_quorum" } });
      await finishJob(ctx, job, "dead", {
        error: `no_quorum: ${judged.completed} instances returned ${judged.distinct} different results, no ${rules.quorum} agree`,
        workerId: worker._id,
      });
      return "dead";
    case "another":
      await requeue(ctx, job, { kind: "release", detail: `instance ${rules.started} returned a result: ${judged.completed} of ${rules.quorum} needed` }, worker._id);
      return "pending";
  }
}
