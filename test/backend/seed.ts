import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { withoutSystemFields, type Farm } from "./setup";

const ROWS_PER_TRANSACTION = 4_000;

/**
 * Put `count` pending jobs in a lane straight into the database (bulk, in transactions under the limits),
 * as jobs:submit would have: one real submit creates the lane and its counters, the rest are copies (which the
 * metrics do not count, like jobs queued before the metrics existed).
 */
export async function seedPending(
  farm: Farm,
  count: number,
  options: { requiredCapabilities?: string[]; priority?: number; delayedUntil?: number; startAt?: number } = {},
): Promise<Id<"lanes">> {
  const firstId = await farm.t.mutation(api.jobs.submit, {
    clientKey: farm.clientKey,
    type: "seed",
    priority: options.priority,
    requiredCapabilities: options.requiredCapabilities,
  });
  const first = (await farm.t.run(async (ctx) => await ctx.db.get(firstId)))!;
  const template = withoutSystemFields(first);
  const startAt = options.startAt ?? first.availableAt;
  for (let done = 1; done < count; done += ROWS_PER_TRANSACTION) {
    const n = Math.min(ROWS_PER_TRANSACTION, count - done);
    await farm.t.run(async (ctx) => {
      for (let i = 0; i < n; i++) {
        const delayed = options.delayedUntil !== undefined;
        const jobId = await ctx.db.insert("jobs", {
          ...template,
          metered: undefined,
          queue: delayed ? "delayed" : "ready",
          availableAt: delayed ? options.delayedUntil! + done + i : startAt + done + i,
        });
        // its payload beside it, as submit writes it
        await ctx.db.insert("jobBodies", { orgId: first.orgId, jobId, part: "payload", value: null, bytes: 4 });
      }
      const shard = await ctx.db
        .query("laneShards")
        .withIndex("by_lane_shard", (q) => q.eq("laneId", first.laneId).eq("shard", 0))
        .unique();
      await ctx.db.patch(shard!._id, { pending: shard!.pending + n });
      // its client key counts them too
      const keyShard = await ctx.db
        .query("keyShards")
        .withIndex("by_client", (q) => q.eq("clientKeyId", first.clientKeyId!))
        .unique();
      if (keyShard) await ctx.db.patch(keyShard._id, { pending: keyShard.pending + n });
      else await ctx.db.insert("keyShards", { orgId: first.orgId, clientKeyId: first.clientKeyId!, pending: n, running: 0 });
    });
  }
  return first.laneId;
}
