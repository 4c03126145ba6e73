import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";

/**
 * Which apps an `apps` lane holds jobs of, so its label says "app.mandelbrot v3" rather than "apps". Noted when a job
 * of an app the lane has not named lands in it: one lane write per new app, never one per job; past APPS_NOTED only
 * that more came (`moreApps`). A lane keeps what it noted until the maintenance pass deletes it empty.
 */

/** Apps a lane names at most. */
export const APPS_NOTED = 3;

type App = { name: string; version: number };

export async function noteLaneApp(ctx: MutationCtx, lane: Doc<"lanes">, app: App | undefined): Promise<Doc<"lanes">> {
  if (!app) return lane;
  const apps = lane.apps ?? [];
  if (apps.some((a) => a.name === app.name && a.version === app.version)) return lane;
  if (apps.length >= APPS_NOTED) {
    if (lane.moreApps) return lane;
    await ctx.db.patch(lane._id, { moreApps: true });
    return { ...lane, moreApps: true };
  }
  const noted = [...apps, { name: app.name, version: app.version }];
  await ctx.db.patch(lane._id, { apps: noted });
  return { ...lane, apps: noted };
}
