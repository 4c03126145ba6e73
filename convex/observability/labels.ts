import type { Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";

/**
 * Bounded label values: a `type` or `client` label takes one of the 100 busiest values, and `other` for the rest,
 * so a farm with thousands of job types or client keys still exposes a bounded number of series.
 */

export const TOP_VALUES = 100;
export const OTHER = "other";
/** The client label of jobs a host app submitted in its own mutations (no client key). */
export const NO_CLIENT = "none";

/**
 * The `client` label of each of these client keys: its name, made unique (two keys of one name, or a key named
 * like the reserved `other` and `none`, get their key prefix added).
 */
export async function clientLabels(ctx: QueryCtx, ids: Iterable<Id<"clientKeys">>): Promise<Map<Id<"clientKeys">, string>> {
  const keys: Array<{ id: Id<"clientKeys">; name: string; prefix: string }> = [];
  for (const id of ids) {
    const key = await ctx.db.get(id);
    keys.push({ id, name: key?.name ?? "deleted", prefix: key?.keyPrefix ?? id });
  }
  const seen = new Map<string, number>();
  for (const k of keys) seen.set(k.name, (seen.get(k.name) ?? 0) + 1);
  const labels = new Map<Id<"clientKeys">, string>();
  for (const k of keys) {
    const clash = (seen.get(k.name) ?? 0) > 1 || k.name === OTHER || k.name === NO_CLIENT;
    labels.set(k.id, clash ? `${k.name} (${k.prefix})` : k.name);
  }
  // two prefixes alike too (4 random characters): the id tells them apart
  const used = new Map<string, number>();
  for (const label of labels.values()) used.set(label, (used.get(label) ?? 0) + 1);
  for (const k of keys) if ((used.get(labels.get(k.id)!) ?? 0) > 1) labels.set(k.id, `${k.name} (${k.id})`);
  return labels;
}
