import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { CLAIM_SPREAD, TIMING } from "./limits";

/** The best few ready jobs of each lane, merged in claim order (priority desc, then availableAt asc). */
export async function readyHeads(ctx: QueryCtx, lanes: Doc<"lanes">[], perLane: number) {
  const heads: Doc<"jobs">[] = [];
  for (const lane of lanes) {
    const jobs = await ctx.db
      .query("jobs")
      .withIndex("by_lane_ready", (q) => q.eq("laneId", lane._id).eq("queue", "ready"))
      .take(perLane);
    heads.push(...jobs);
  }
  return heads.sort((a, b) => a.negPriority - b.negPriority || a.availableAt - b.availableAt);
}

/**
 * Take `count` jobs from sorted candidates. Each pick is random among the first CLAIM_SPREAD candidates
 * that share the best priority and became ready within fifoSlackMs of the best one, so concurrent workers
 * spread over near-simultaneous jobs while priority and FIFO order still hold.
 */
export function pickJobs(sorted: Doc<"jobs">[], count: number): Doc<"jobs">[] {
  const remaining = [...sorted];
  const picked: Doc<"jobs">[] = [];
  while (picked.length < count && remaining.length > 0) {
    const best = remaining[0];
    let pool = 1;
    while (
      pool < Math.min(CLAIM_SPREAD, remaining.length) &&
      remaining[pool].priority === best.priority &&
      remaining[pool].availableAt <= best.availableAt + TIMING.fifoSlackMs
    ) {
      pool++;
    }
    const [job] = remaining.splice(Math.floor(Math.random() * pool), 1);
    picked.push(job);
  }
  return picked;
}
