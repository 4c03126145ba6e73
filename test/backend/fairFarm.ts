import { vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Doc, Id } from "../../convex/_generated/dataModel";
import { runDue } from "./queueState";
import schema from "../../convex/schema";
import { loadConvexTest } from "../server/tableScan";
import { enrollWorker, modules, newFarm, TEST_TYPES, type Enrolled, type Farm } from "./setup";

/** Helpers for the fair-share tests: client keys of one org, workers that take jobs, who got what. */

export type Key = { name: string; key: string; clientKeyId: Id<"clientKeys"> };

export async function addKey(farm: Farm, name: string): Promise<Key> {
  const { key, clientKeyId } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name });
  return { name, key, clientKeyId };
}

export async function setLimits(
  farm: Farm,
  key: Key,
  limits: { weight?: number | null; maxRunning?: number | null; fairnessWeights?: Array<{ fairnessKey: string; weight: number }> | null },
) {
  return await farm.t.mutation(internal.admin.setClientKeyLimits, { clientKeyId: key.clientKeyId, ...limits });
}

/**
 * `n` jobs of type x for this key in batches of up to 500, 1 ms apart (FIFO order is submission order). The clock
 * moves without running what is scheduled: the dispatcher runs when a test says so (dispatchAll).
 */
export async function submitMany(farm: Farm, key: Key, n: number, spec: { fairnessKey?: string; priority?: number; type?: string } = {}) {
  const ids: Id<"jobs">[] = [];
  for (let done = 0; done < n; done += 500) {
    const jobs = Array.from({ length: Math.min(500, n - done) }, () => ({ type: spec.type ?? "x", ...spec }));
    ids.push(...(await farm.t.mutation(api.jobs.submitBatch, { clientKey: key.key, jobs })));
    vi.setSystemTime(Date.now() + 1);
  }
  return ids;
}

async function jobsByIds(farm: Farm, ids: Id<"jobs">[]) {
  return await farm.t.run(async (ctx) => {
    const jobs: Doc<"jobs">[] = [];
    for (const id of ids) jobs.push((await ctx.db.get(id))!);
    return jobs;
  });
}

/** Who a job counts for: its client key's name, and its fairness key after a slash. */
export async function ownersOf(farm: Farm, keys: Key[], ids: Id<"jobs">[]): Promise<string[]> {
  const names = new Map(keys.map((k) => [k.clientKeyId as string, k.name]));
  return (await jobsByIds(farm, ids)).map((job) => `${names.get(job.clientKeyId ?? "") ?? "?"}${job.fairnessKey ? `/${job.fairnessKey}` : ""}`);
}

/**
 * A worker that takes jobs one claim at a time (a simple caller: each claim reads the lane heads in the
 * dispatcher's order) and completes each before the next: the order it got them in.
 */
export async function takeOneByOne(farm: Farm, worker: Enrolled, n: number): Promise<Id<"jobs">[]> {
  const taken: Id<"jobs">[] = [];
  for (let i = 0; i < n; i++) {
    const [job] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
    if (!job) break;
    taken.push(job.jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: job.leaseId, result: null });
  }
  return taken;
}

/** Workers of `slots` slots each that wait for offers (oldest first), 5 ms apart; the dispatcher has not run yet. */
export async function waitingWorkers(farm: Farm, n: number, slots = 1): Promise<Enrolled[]> {
  const workers: Enrolled[] = [];
  for (let i = 0; i < n; i++) {
    const w = await enrollWorker(farm, { name: `w${i + 1}`, maxConcurrentJobs: slots });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: TEST_TYPES, slots });
    workers.push(w);
    vi.setSystemTime(Date.now() + 5);
  }
  return workers;
}

/** The jobs offered to these workers, in the order the dispatcher offered them (oldest waiter first). */
export async function offeredTo(farm: Farm, workers: Enrolled[]): Promise<Id<"jobs">[]> {
  return await farm.t.run(async (ctx) => {
    const ids: Id<"jobs">[] = [];
    for (const w of workers) {
      const rows = await ctx.db
        .query("inbox")
        .withIndex("by_worker_kind", (q) => q.eq("workerId", w.workerId).eq("kind", "offer"))
        .collect();
      ids.push(...rows.map((r) => r.jobId!));
    }
    return ids;
  });
}

/** Claim every offer of these workers and complete it, declaring `slots` again: they wait for as many more. */
export async function finishOffers(farm: Farm, workers: Enrolled[], slots: number) {
  for (const w of workers) {
    const { offers } = await farm.t.query(api.workers.doorbell, { apiKey: w.apiKey });
    if (offers.length === 0) continue;
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: offers.length });
    for (const job of claimed) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: null, slots });
  }
}

/** Run the dispatcher until it goes idle (its rounds 25 ms apart: offers stay far from their expiry). */
export async function dispatchAll(farm: Farm, maxRounds = 200) {
  for (let i = 0; i < maxRounds; i++) {
    await runDue(farm.t, 1);
    const state = await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).unique());
    if (!state?.scheduled) return;
  }
}

/**
 * A farm on the loopback server's convex-test (test/server/tableScan.ts): the same answers, but a query reads only
 * its table and index range, so tests of thousands of jobs and offers run in seconds.
 */
export async function newIndexedFarm(): Promise<Farm> {
  const { convexTest } = await loadConvexTest();
  return await newFarm(convexTest({ schema, modules, transactionLimits: true }));
}

/** How many of these names there are, by name. */
export function tally(names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}
