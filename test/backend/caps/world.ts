import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { APP_LIMITS } from "../../../convex/core/appLimits";
import { LIMITS } from "../../../convex/core/limits";
import { runDue, scheduled } from "../queueState";
import { enrollWorker, newFarm, type Enrolled, type Farm } from "../setup";
import { atStep, capsBackend } from "./peaks";

/** Builders for the "at the caps" suite: every body at its documented size, through the public functions. */

/** The type of the suite's big jobs: a job goes only to workers that handle its type, so the suite's workers handle it. */
export const BIG_TYPE = "big";

/** A payload (or result) whose JSON is just under the 256 KiB cap, distinct per `tag`. */
export function fullBody(tag: string | number, bytes: number = LIMITS.payloadBytes): string {
  return `${tag}:`.padEnd(bytes - 16, "x");
}

/** The largest checkpoint a job may keep (512 KiB decoded), as base64. */
export function fullCheckpoint(fill: number): string {
  return Buffer.alloc(APP_LIMITS.checkpointBytesMax, fill).toString("base64");
}

/** An error text at the cap a worker may report (longer ones are cut to it). */
export const fullError = (tag: string | number) => `${tag}:`.padEnd(LIMITS.errorChars, "e");

/** The scripts an output chunk at its cap is written in: one, three and four UTF-8 bytes a character. */
export type Script = "latin" | "cjk" | "emoji";
const FILL: Record<Script, string> = { latin: "o", cjk: "字", emoji: "😀" };

export const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/** An output chunk at its cap (8 KiB of UTF-8), in `script`. */
export function fullChunk(seq: number, script: Script = "latin"): string {
  const head = `${seq}:`;
  return head + FILL[script].repeat(Math.floor((LIMITS.outputChunkBytes - head.length) / utf8Bytes(FILL[script])));
}

export async function capsFarm(): Promise<Farm> {
  atStep("seed");
  return await newFarm(capsBackend());
}

/** Big jobs submitted in batches that stay within the batch payload cap. */
export async function submitBig(
  farm: Farm,
  count: number,
  spec: { type?: string; requiredCapabilities?: (i: number) => string[]; maxAttempts?: number; batchId?: string; bytes?: number } = {},
): Promise<Array<Id<"jobs">>> {
  const bytes = spec.bytes ?? LIMITS.payloadBytes;
  const perBatch = Math.max(1, Math.floor(LIMITS.batchPayloadBytes / bytes));
  const ids: Array<Id<"jobs">> = [];
  for (let start = 0; start < count; start += perBatch) {
    const jobs = Array.from({ length: Math.min(perBatch, count - start) }, (_, k) => {
      const i = start + k;
      return {
        type: spec.type ?? BIG_TYPE,
        payload: fullBody(`payload-${i}`, bytes),
        requiredCapabilities: spec.requiredCapabilities?.(i),
        maxAttempts: spec.maxAttempts,
        batchId: spec.batchId,
      };
    });
    ids.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs })));
  }
  return ids;
}

export type Leased = Awaited<ReturnType<typeof claim>>[number];

export const claim = (farm: Farm, w: Enrolled, max: number = LIMITS.claimMax) =>
  farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max });

/** Claim until `count` jobs are held (each claim hands out what fits its byte budget). */
export async function claimAll(farm: Farm, w: Enrolled, count: number): Promise<Leased[]> {
  const held: Leased[] = [];
  for (let round = 0; held.length < count && round < 100; round++) {
    held.push(...(await claim(farm, w, Math.min(LIMITS.claimMax, count - held.length))));
    await runDue(farm.t);
  }
  if (held.length < count) throw new Error(`claimed ${held.length} of ${count}`);
  return held;
}

/** A manager (canManage) that may use the console, and runs the suite's big jobs. */
export async function manager(farm: Farm, capabilities: string[] = []): Promise<Enrolled> {
  return await enrollWorker(farm, { name: "op", capabilities, types: [BIG_TYPE], canManage: true, maxConcurrentJobs: LIMITS.maxConcurrentJobs });
}

/** `n` dead letters with full payloads and full errors (one attempt each, failed for good). */
export async function deadLetters(farm: Farm, n: number, w: Enrolled): Promise<Array<Id<"jobs">>> {
  const ids = await submitBig(farm, n, { maxAttempts: 1 });
  let failed = 0;
  while (failed < n) {
    for (const job of await claimAll(farm, w, Math.min(LIMITS.claimMax, n - failed))) {
      await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: job.leaseId, error: fullError(job.jobId), retryable: false });
      failed++;
    }
  }
  return ids;
}

/** Run scheduled functions whose name contains `name` until none is left pending (bounded). */
export async function drain(farm: Farm, name: string, rounds = 200): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await runDue(farm.t, 1);
    if ((await scheduled(farm.t, name, "pending")).length === 0) return;
  }
  throw new Error(`${name} still scheduled after ${rounds} rounds`);
}

/** Refresh the org's summary now. */
export async function summarise(farm: Farm): Promise<void> {
  await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, all: true });
}
