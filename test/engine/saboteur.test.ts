import { describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { connect, sleep, waitForJobs, type Farm } from "./helpers";
import { startScripted, useFarmWithClis } from "./scriptedWorker";

/**
 * A saboteur, written against the public worker API only: it fails every instance it gets, every other one with
 * `retryable: false`. A failed instance is one error result of its round, never the job's verdict: with quorum 2
 * and two honest CLI workers beside it, every job must succeed with the honest result, and the saboteur is never
 * handed the same job twice.
 */
function startSaboteur(farm: Farm, apiKey: string) {
  let failures = 0;
  return startScripted(farm, apiKey, async (client, lease) => {
    await client.mutation(api.workers.fail, { apiKey, leaseId: lease.leaseId, error: "sabotage", retryable: failures++ % 2 === 1, cpuMs: 5_000 });
  });
}

describe("replicated jobs against a saboteur that fails every instance", () => {
  const suite = useFarmWithClis();

  it("1 saboteur claiming first (half retryable: false) and 2 honest CLI workers, 30 jobs with quorum 2: every job succeeds with the honest result", async () => {
    const farm = suite.farm();
    const [honestA, honestB, saboteurKey] = farm.seeded.workerKeys;
    const saboteurId = farm.seeded.workerIds[2];
    const saboteur = startSaboteur(farm, saboteurKey);
    const client = connect(farm);
    const jobs = Array.from({ length: 30 }, (_, n) => ({ type: "demo.echo", payload: { n, cube: n * n * n }, validation: { quorum: 2 } }));
    const ids: Array<Id<"jobs">> = await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs });
    // the saboteur alone for a moment: it takes first instances before anyone honest is there
    await sleep(500);
    expect(saboteur.acted()).toBeGreaterThan(0);
    await suite.startClis([honestA, honestB]);
    const rows = await waitForJobs(farm, ids, 150_000);
    await saboteur.stop();
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
    expect(rows.map((r): unknown => r.result)).toEqual(jobs.map((j) => j.payload));
    // instance failures never used a job's attempts
    expect(rows.every((r) => r.attempt === 0)).toBe(true);

    const { instances, credit } = await farm.server.t.run(async (ctx) => ({
      instances: await ctx.db.query("jobInstances").collect(),
      credit: await ctx.db
        .query("creditTotals")
        .withIndex("by_worker", (q) => q.eq("workerId", saboteurId))
        .unique(),
    }));
    const sabotaged = instances.filter((i) => i.workerId === saboteurId);
    expect(sabotaged.length).toBe(saboteur.acted());
    expect(sabotaged.every((i) => i.status === "failed" && i.error === "sabotage")).toBe(true);
    // excluded once it failed: never two instances of one job
    expect(new Set(sabotaged.map((i) => i.jobId)).size).toBe(sabotaged.length);
    for (const id of ids) expect(instances.filter((i) => i.jobId === id && i.valid === true && i.workerId !== saboteurId).length).toBe(2);
    expect(credit?.cpuMs ?? 0).toBe(0);

    for (const run of suite.clis) run.child.kill("SIGINT");
    for (const run of suite.clis) expect(await run.exited).toBe(0);
  }, 240_000);
});
