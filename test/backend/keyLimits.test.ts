// A client key's maxRunning (convex/lanes/keyRunning.ts, fairRound.ts): its running jobs and instances at once, offered
// ones included; above it jobs wait pending and say why; the count holds whichever way a job stops running.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { KEY_FOLD_AGE_MS } from "../../convex/lanes/keyRunning";
import { addKey, dispatchAll, newIndexedFarm, offeredTo, setLimits, submitMany, waitingWorkers, type Key } from "./fairFarm";
import { realPerKey } from "./sweep/fairConsistency";
import { donor, instanceLease } from "./validationDonors";
import { enrollWorker, runningJobs, TEST_TYPES, type Enrolled, type Farm } from "./setup";
import { checkConsistency, readAll } from "./sweep/consistency";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** What the key really runs now (offered jobs and running instances included), read from the jobs themselves. */
async function runningOf(farm: Farm, key: Key): Promise<number> {
  const jobs = await readAll(farm.t, "jobs");
  const instances = await readAll(farm.t, "jobInstances");
  return realPerKey(jobs, instances).running.get(key.clientKeyId) ?? 0;
}

async function consistent(farm: Farm) {
  expect(await checkConsistency(farm.t)).toEqual([]);
}

/** Each worker claims what it was offered; returns the leases by worker. */
async function claimOffers(farm: Farm, workers: Enrolled[]) {
  const leases = new Map<Enrolled, string[]>();
  for (const w of workers) {
    const { offers } = await farm.t.query(api.workers.doorbell, { apiKey: w.apiKey });
    if (offers.length === 0) continue;
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: offers.length });
    leases.set(w, claimed.map((c) => c.leaseId));
  }
  return leases;
}

async function jobView(farm: Farm, key: Key, jobId: Id<"jobs">) {
  const view = await farm.t.query(api.jobs.get, { clientKey: key.key, jobId });
  if (!view) throw new Error(`no job ${jobId}`);
  return view;
}

describe("maxRunning", () => {
  test("holds: jobs above it wait and say why, and one starts as each running one ends, its end folded or not yet", async () => {
    const farm = await newIndexedFarm();
    const ci = await addKey(farm, "ci");
    await setLimits(farm, ci, { maxRunning: 3 });
    const jobs = await submitMany(farm, ci, 10);
    const workers = await waitingWorkers(farm, 6);
    await dispatchAll(farm);
    expect(await offeredTo(farm, workers)).toEqual(jobs.slice(0, 3));
    expect((await jobView(farm, ci, jobs[3])).waitReason).toBe("client key 'ci' is at its limit of 3 running");
    expect((await jobView(farm, ci, jobs[0])).waitReason).toBeNull();
    await consistent(farm);
    const leases = await claimOffers(farm, workers);
    // two end at once: their ends are not folded yet when the dispatcher runs (it looks at them when at the limit)
    const [first, second] = [...leases.entries()];
    await farm.t.mutation(api.workers.complete, { apiKey: first[0].apiKey, leaseId: first[1][0], result: 1, slots: 1 });
    await farm.t.mutation(api.workers.fail, { apiKey: second[0].apiKey, leaseId: second[1][0], error: "no", retryable: false, slots: 1 });
    expect(await runningOf(farm, ci)).toBe(1);
    await dispatchAll(farm);
    expect(await runningOf(farm, ci)).toBe(3);
    await consistent(farm);
    // and so on to the end, never above 3
    for (let round = 0; round < 10 && (await runningOf(farm, ci)) > 0; round++) {
      await claimOffers(farm, workers);
      for (const w of workers) {
        for (const job of await runningJobs(farm.t, w.apiKey)) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: 1, slots: 1 });
      }
      vi.advanceTimersByTime(KEY_FOLD_AGE_MS);
      await dispatchAll(farm);
      expect(await runningOf(farm, ci)).toBeLessThanOrEqual(3);
      await consistent(farm);
    }
    const statuses = await farm.t.run(async (ctx) => (await Promise.all(jobs.map((id) => ctx.db.get(id)))).map((j) => j!.status));
    expect(statuses).toEqual(["succeeded", "dead", ...Array<string>(8).fill("succeeded")]);
  });

  test("counts each running instance of a replicated job", async () => {
    const farm = await newIndexedFarm();
    const ci = await addKey(farm, "ci");
    await setLimits(farm, ci, { maxRunning: 2 });
    const replicated = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x", validation: { quorum: 2 } });
    const single = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x" });
    await instanceLease({ ...farm, clientKey: ci.key }, await donor(farm, "a"), replicated);
    await instanceLease({ ...farm, clientKey: ci.key }, await donor(farm, "b"), replicated);
    const c = await donor(farm, "c");
    expect(await farm.t.mutation(api.workers.claim, { apiKey: c.apiKey, capabilities: TEST_TYPES })).toEqual([]);
    expect((await jobView(farm, ci, single)).waitReason).toBe("client key 'ci' is at its limit of 2 running");
    await consistent(farm);
  });

  test("an offer turned into an instance still holds its slot", async () => {
    const farm = await newIndexedFarm();
    const ci = await addKey(farm, "ci");
    await setLimits(farm, ci, { maxRunning: 2 });
    const replicated = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x", validation: { quorum: 2 } });
    const single = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x" });
    const donors = [await donor(farm, "a"), await donor(farm, "b"), await donor(farm, "c")];
    for (const d of donors) await farm.t.mutation(api.workers.ready, { apiKey: d.apiKey, capabilities: TEST_TYPES, slots: 1 });
    await dispatchAll(farm);
    for (const d of donors) {
      const { offers } = await farm.t.query(api.workers.doorbell, { apiKey: d.apiKey });
      if (offers.length > 0) await farm.t.mutation(api.workers.claim, { apiKey: d.apiKey, capabilities: TEST_TYPES, max: offers.length });
    }
    // the replicated job is ready again for its second instance, but the key runs an instance and the single job
    await dispatchAll(farm);
    expect(await runningOf(farm, ci)).toBe(2);
    expect((await jobView(farm, ci, replicated)).waitReason).toBe("client key 'ci' is at its limit of 2 running");
    expect((await jobView(farm, ci, single)).status).toBe("running");
    await consistent(farm);
  });

  test("a lease that expires frees its slot and wakes the dispatcher: the key's next job starts", async () => {
    const farm = await newIndexedFarm();
    const ci = await addKey(farm, "ci");
    await setLimits(farm, ci, { maxRunning: 1 });
    const [first, next] = await submitMany(farm, ci, 2);
    const silent = await enrollWorker(farm, { name: "silent", maxConcurrentJobs: 1 });
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: silent.apiKey, capabilities: TEST_TYPES });
    expect(lease.jobId).toBe(first);
    const [idle] = await waitingWorkers(farm, 1);
    await dispatchAll(farm);
    expect(await offeredTo(farm, [idle])).toEqual([]);
    vi.advanceTimersByTime(lease.leaseMs + 1);
    await farm.t.finishInProgressScheduledFunctions();
    await dispatchAll(farm);
    expect(await offeredTo(farm, [idle])).toEqual([next]);
    await consistent(farm);
  });

  test("a first limit counts what the key already runs; lifting it lets the rest start", async () => {
    const farm = await newIndexedFarm();
    const ci = await addKey(farm, "ci");
    await submitMany(farm, ci, 8);
    const workers = await waitingWorkers(farm, 5);
    await dispatchAll(farm);
    await claimOffers(farm, workers);
    expect(await runningOf(farm, ci)).toBe(5);
    expect((await setLimits(farm, ci, { maxRunning: 3 })).running).toBe(5);
    await consistent(farm);
    const more = await waitingWorkers(farm, 3);
    await dispatchAll(farm);
    expect(await offeredTo(farm, more)).toEqual([]);
    await setLimits(farm, ci, { maxRunning: null });
    await dispatchAll(farm);
    expect(await offeredTo(farm, more)).toHaveLength(3);
    expect(await farm.t.run(async (ctx) => await ctx.db.query("keyRunning").collect())).toEqual([]);
    await consistent(farm);
  });

  test("another key is not held back by one at its limit", async () => {
    const farm = await newIndexedFarm();
    const [ci, app] = [await addKey(farm, "ci"), await addKey(farm, "app")];
    await setLimits(farm, ci, { maxRunning: 1 });
    await submitMany(farm, ci, 5);
    const theirs = await submitMany(farm, app, 3);
    const workers = await waitingWorkers(farm, 4);
    await dispatchAll(farm);
    const offered = await offeredTo(farm, workers);
    expect(offered).toHaveLength(4);
    expect(offered.filter((id) => theirs.includes(id))).toHaveLength(3);
    await consistent(farm);
  });
});
