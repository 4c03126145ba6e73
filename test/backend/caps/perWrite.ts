import { expect } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { LIMITS } from "../../../convex/core/limits";
import { measure } from "../metrics";
import { enrollWorker } from "../setup";
import { BIG_TYPE, capsFarm, claim, fullBody } from "./world";

/** Bytes written by the calls a running job makes often, for a job whose payload is `payloadBytes`. */
export type PerWrite = { offer: number; lease: number; heartbeat: number; progress: number };

/**
 * One job through the dispatcher to a waiting worker: the bytes written by its offer (one dispatcher round
 * offering it), its lease (the claim of the offer), a heartbeat and a progress report with status text at its cap.
 */
export async function bytesPerWrite(payloadBytes: number): Promise<PerWrite> {
  const farm = await capsFarm();
  const w = await enrollWorker(farm, { types: [BIG_TYPE], maxConcurrentJobs: 1 });
  expect(await claim(farm, w, 1)).toEqual([]);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: BIG_TYPE, payload: fullBody("one", payloadBytes) });
  const state = await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).unique());
  expect(state!.scheduled).toBe(true);
  const offer = await measure(farm.t, "mutation", internal.dispatch.run, { orgId: farm.orgId, generation: state!.generation });
  expect(offer.result.offered).toBe(1);
  const lease = await measure(farm.t, "mutation", api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 });
  expect(lease.result).toHaveLength(1);
  const leaseId = lease.result[0].leaseId;
  const heartbeat = await measure(farm.t, "mutation", api.workers.heartbeat, { apiKey: w.apiKey, leaseId });
  const progress = await measure(farm.t, "mutation", api.workers.heartbeat, {
    apiKey: w.apiKey,
    leaseId,
    progress: 0.5,
    status: "s".repeat(LIMITS.statusTextChars),
  });
  return {
    offer: offer.usage.bytesWritten,
    lease: lease.usage.bytesWritten,
    heartbeat: heartbeat.usage.bytesWritten,
    progress: progress.usage.bytesWritten,
  };
}

/** The target for each: a job's often-written row stays small whatever its payload. */
export const PER_WRITE_TARGET_BYTES = 4 * 1024;
