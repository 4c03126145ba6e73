import type { Value } from "convex/values";
import type { Doc } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { canonicalJson, canonicalValue } from "../core/canonical";
import { noteMetrics } from "../lanes/entry";
import { addPendingCredit, creditFor } from "./credit";
import { grant, leastClaim, setCredit } from "./instanceCredit";
import { keepResult } from "./instanceResults";
import { bestGroup, countable, endInstance, instancesOf, type Instance } from "./instances";
import { sha256Hex } from "../access/entry";
import { verdictsOf } from "../observability/entry";
import { noteChecked } from "./validationTrust";

export type Judgement =
  | { kind: "valid"; result: Value; agreeing: number; capMs: number }
  | { kind: "no_quorum"; distinct: number; completed: number }
  | { kind: "another"; completed: number };

/**
 * The worker's result for its instance: kept (its canonical value, once per distinct hash), then judged with the
 * others of this round. Returns what the job does next; the instances, credit and trust are already settled when
 * it does (instances still running are the caller's). Results of workers revoked meanwhile (or gone) no longer count.
 */
export async function completeInstance(
  ctx: MutationCtx,
  job: Doc<"jobs">,
  mine: Instance,
  worker: Doc<"workers">,
  result: unknown,
  cpuMs: number | undefined,
): Promise<Judgement> {
  const rules = job.validation!;
  const now = Date.now();
  const claim = creditFor({ ...job, startedAt: mine.startedAt }, worker, cpuMs, now);
  // what the result means, spelled one way: its hash, and the value kept and (once agreed) stored as the job's result
  const canonical = canonicalJson(result);
  const resultHash = await sha256Hex(canonical);
  const agreed = canonicalValue(canonical);
  const resultBytes = await keepResult(ctx, job, rules.round, resultHash, agreed);
  await endInstance(ctx, job, mine, { status: "completed", resultHash, resultBytes, credit: "pending", creditCpuMs: claim.cpuMs, creditMeasured: claim.measured });
  await addPendingCredit(ctx, worker, claim.cpuMs, 1);

  const rows = await instancesOf(ctx, job._id, rules.round);
  const results = rows.filter((r) => r.status === "completed");
  const { completed: counted } = await countable(ctx, rows, worker);
  const row = rows.find((r) => r._id === mine._id)!;

  if (rules.alone && results.length === 1) {
    await grant(ctx, row, claim, now, { valid: true, alone: true });
    await noteMetrics(ctx, job.orgId, { verdicts: { valid: 1 } });
    return { kind: "valid", result: agreed, agreeing: 1, capMs: claim.cpuMs };
  }

  const agreeing = counted.filter((r) => r.resultHash === resultHash);
  if (agreeing.length >= rules.quorum) {
    const least = leastClaim(agreeing);
    const verdicts: boolean[] = [];
    for (const r of results) {
      if (r.credit !== "pending") continue;
      if (!counted.includes(r)) {
        await setCredit(ctx, r, { credit: "denied", creditNote: "worker revoked before its result was validated" });
        continue;
      }
      const valid = r.resultHash === resultHash;
      verdicts.push(valid);
      await noteChecked(ctx, r.workerId === worker._id ? worker : await ctx.db.get(r.workerId), job.type, valid);
      if (valid) await grant(ctx, r, least, now, { valid: true });
      else {
        await setCredit(ctx, r, { valid: false, credit: "denied", creditNote: `invalid: its result differed from the one ${agreeing.length} other machines agreed on` });
      }
    }
    await noteMetrics(ctx, job.orgId, { verdicts: verdictsOf(verdicts) });
    return { kind: "valid", result: agreed, agreeing: agreeing.length, capMs: least.cpuMs };
  }

  const left = rules.maxInstances - counted.length;
  if (left <= 0 || bestGroup(counted) + left < rules.quorum) {
    const distinct = new Set(results.map((r) => r.resultHash)).size;
    const judged = results.filter((r) => r.credit === "pending");
    for (const r of judged) {
      await setCredit(ctx, r, { credit: "denied", creditNote: `no quorum: ${distinct} different results from ${results.length} instances` });
    }
    await noteMetrics(ctx, job.orgId, { verdicts: { no_quorum: judged.length } });
    return { kind: "no_quorum", distinct, completed: results.length };
  }
  return { kind: "another", completed: counted.length };
}
