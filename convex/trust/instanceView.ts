import type { Doc } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { roundResults } from "./instanceResults";
import { instancesOf } from "./instances";
import { maxErrorsOf } from "./validation";

/**
 * jobs:get's `validation`: the state, the rules and this round's instances; once the round ended without a
 * quorum, every distinct result (`resultsCut`: more than a read may hold, the rest listed without their value).
 */
export async function validationView(ctx: QueryCtx, job: Doc<"jobs">) {
  const rules = job.validation;
  if (!rules) return { state: "single" as const, quorum: 1, instances: [] };
  const rows = await instancesOf(ctx, job._id, rules.round);
  const state: "validating" | "valid" | "no_quorum" | "too_many_errors" = rules.outcome ?? "validating";
  const instances = rows.map((r) => ({
    workerName: r.workerName,
    status: r.status,
    ...(r.status === "running" && r.progress !== undefined ? { progress: r.progress } : {}),
    ...(r.status === "running" && r.late ? { late: true } : {}),
    ...(r.resultHash !== undefined ? { resultHash: r.resultHash } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    ...(r.valid !== undefined ? { valid: r.valid } : {}),
    ...(r.credit !== undefined ? { credit: r.credit } : {}),
    ...(r.creditNote !== undefined ? { creditNote: r.creditNote } : {}),
  }));
  const view = {
    state,
    quorum: rules.quorum,
    maxInstances: rules.maxInstances,
    maxErrorInstances: maxErrorsOf(rules),
    distinct: rules.distinct ?? ("machine" as const),
    ...(rules.spare ? { spare: rules.spare } : {}),
    round: rules.round,
    instances,
  };
  if (state !== "no_quorum") return view;
  const { values, cut } = await roundResults(ctx, job._id, rules.round, rows);
  const hashes = [...new Set(rows.filter((r) => r.resultHash !== undefined).map((r) => r.resultHash!))];
  const results = hashes.map((resultHash) => ({
    resultHash,
    count: rows.filter((o) => o.resultHash === resultHash).length,
    ...(values.has(resultHash) ? { result: values.get(resultHash) } : {}),
  }));
  return { ...view, results, ...(cut ? { resultsCut: true } : {}) };
}

/**
 * A replicated job's output chunks, one section per instance that wrote them (in the order each first wrote),
 * named by instance number, round and worker; chunks of no instance (none expected) under instance 0.
 */
export async function outputPerInstance(ctx: QueryCtx, chunks: Array<Pick<Doc<"jobOutput">, "chunk" | "instance">>) {
  const sections = new Map<string, { instance: number; round: number; workerName: string; text: string }>();
  for (const c of chunks) {
    const key = c.instance ?? "";
    let section = sections.get(key);
    if (!section) {
      const row = c.instance ? await ctx.db.get(c.instance) : null;
      section = { instance: row?.n ?? 0, round: row?.round ?? 0, workerName: row?.workerName ?? "", text: "" };
      sections.set(key, section);
    }
    section.text += c.chunk;
  }
  return [...sections.values()];
}
