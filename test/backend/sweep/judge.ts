import type { TableNames } from "../../../convex/_generated/dataModel";
import type { Backend } from "../setup";
import { readAll } from "./consistency";
import type { Expect } from "./garbage";
import type { Outcome } from "./outcome";

const PRE_BODY = new Set(["validator", "serialization"]);
const CREDENTIAL_CODES = new Set(["bad_key", "revoked", "token_used", "token_expired", "forbidden", ...PRE_BODY]);
const LEASE_CODES = new Set(["stale_lease", ...PRE_BODY]);
const NOT_FOUND_CODES = new Set(["not_found", ...PRE_BODY]);

/** Why an outcome breaks the rules for a call with this expectation, or null when it is fine. */
export function verdict(expect: Expect, label: string, outcome: Outcome): string | null {
  if (outcome.kind === "crashed") return `crashed: ${outcome.message.slice(0, 300)}`;
  if (outcome.kind === "answered") {
    if (expect === "reject") return `accepted garbage, answered ${JSON.stringify(outcome.value)?.slice(0, 200)}`;
    if (expect === "notFound" && outcome.value !== null) {
      return `answered ${JSON.stringify(outcome.value)?.slice(0, 200)} for an id that is not the caller's`;
    }
    return null;
  }
  if (expect === "notFound" && !NOT_FOUND_CODES.has(outcome.code)) return `refused with ${outcome.code}, expected not_found`;
  const single = !label.includes(" + ");
  if (single && /^(apiKey|clientKey|token): /.test(label) && !CREDENTIAL_CODES.has(outcome.code)) {
    return `bad credential refused with ${outcome.code}`;
  }
  if (single && /^leaseId: /.test(label) && !LEASE_CODES.has(outcome.code)) return `bad lease refused with ${outcome.code}`;
  return null;
}

const TABLES: TableNames[] = [
  "orgs",
  "enrollments",
  "workers",
  "clientKeys",
  "lanes",
  "laneShards",
  "orgShards",
  "throughput",
  "jobs",
  "jobOutput",
  "jobEvents",
  "presence",
  "workerSlots",
  "counterDeltas",
  "waiters",
  "laneWaiters",
  "inbox",
  "dispatchStates",
  "summaryStates",
  "summaries",
  "creditDays",
  "creditTotals",
  "bulkOps",
  "webhooks",
  "webhookDeliveries",
  "webhookRateLimits",
  "keyShards",
  "keyRunning",
  "keyRunningDeltas",
  "fairPasses",
  "fairClocks",
  "fairCursors",
  "fairnessWeights",
];

/** Every row of every table plus the scheduled functions, for "nothing changed" assertions. */
export async function fullSnapshot(t: Backend) {
  const tables: Record<string, unknown[]> = {};
  for (const table of TABLES) tables[table] = await readAll(t, table);
  tables._scheduled_functions = await t.run(async (ctx) => await ctx.db.system.query("_scheduled_functions").collect());
  return tables;
}
