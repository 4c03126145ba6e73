import { cronJobs } from "convex/server";
import { internal } from "./_generated/api";

const crons = cronJobs();

crons.interval("retention-sweep", { hours: 1 }, internal.retention.sweep, {});
crons.interval("cache-prune", { hours: 1 }, internal.cache.pruneExpired, {});
// every loop latch left armed by a failed run is re-armed (convex/watchdog.ts; TIMING.watchdogEveryMs)
crons.interval("watchdog", { minutes: 1 }, internal.watchdog.check, {});

// a schedule whose next tick was lost runs once (convex/schedules.ts)
crons.interval("schedules-catch-up", { minutes: 5 }, internal.schedules.catchUp, {});

export default crons;
