import { v } from "convex/values";
import { internalQuery, type QueryCtx } from "./_generated/server";
import type { Id } from "./_generated/dataModel";
import { operatorFromKey } from "./access/auth";
import { fail } from "./core/errors";
import { looksLikeSecret, type SecretKind } from "./access/keys";
import { exposition } from "./observability/exposition";
import { scrapeOrg } from "./observability/scrape";
import { orgLanes } from "./lanes/lanes";
import { summaryOf } from "./queue/summary";

/**
 * The org's metrics in Prometheus's text format, for GET /api/metrics (convex/http.ts): the key must be an
 * operator key (`bad_key`/`revoked` for an unknown or revoked one, `forbidden` for a key of another kind). `now`:
 * the caller's clock (the age of the oldest ready job).
 */
export const scrape = internalQuery({
  args: { apiKey: v.string(), now: v.number() },
  handler: async (ctx, { apiKey, now }) => {
    const orgId = await operatorOrg(ctx, apiKey);
    const queue = { lanes: await orgLanes(ctx, orgId), summary: await summaryOf(ctx, orgId) };
    return exposition(await scrapeOrg(ctx, orgId, queue, now));
  },
});

const OTHER_KINDS: Array<[SecretKind, string]> = [
  ["fh_w_", "a worker key"],
  ["fh_c_", "a client key"],
  ["fh_e_", "an enrollment token"],
  ["fh_h_", "a webhook secret"],
];

/** The org of an operator key; a key of another kind (a managing worker's too) is refused as forbidden. */
async function operatorOrg(ctx: QueryCtx, apiKey: string): Promise<Id<"orgs">> {
  const other = OTHER_KINDS.find(([kind]) => looksLikeSecret(kind, apiKey));
  if (other) fail("forbidden", `The metrics take an operator key (fh_o_…); this is ${other[1]}`);
  if (!looksLikeSecret("fh_o_", apiKey)) fail("bad_key", "Malformed operator key (expected fh_o_…)");
  return (await operatorFromKey(ctx, apiKey)).orgId;
}
