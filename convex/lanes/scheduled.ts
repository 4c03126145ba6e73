import type { Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * Cancel a scheduled check that has not started. One that already started (it may be waiting for this very
 * transaction to commit) is left alone: it finds its job moved on and does nothing.
 */
export async function cancelIfPending(ctx: MutationCtx, id: Id<"_scheduled_functions">): Promise<void> {
  const scheduled = await ctx.db.system.get(id);
  if (scheduled?.state.kind === "pending") await ctx.scheduler.cancel(id);
}
