import { describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { connect, sleep, waitForJobs, type Farm } from "./helpers";
import { startScripted, useFarmWithClis } from "./scriptedWorker";

/**
 * A lying worker, written against the public worker API only: it claims demo.echo jobs and completes each
 * with a result of its own making. With quorum 2 and two honest CLI workers beside it, every job must end
 * with the honest result, and the liar must end with a streak of 0 and no credit.
 */
function startLiar(farm: Farm, apiKey: string) {
  return startScripted(farm, apiKey, async (client, lease) => {
    await client.mutation(api.workers.complete, { apiKey, leaseId: lease.leaseId, result: { forged: true, by: "liar" }, cpuMs: 5_000 });
  });
}

describe("replicated jobs against a lying worker", () => {
  const suite = useFarmWithClis();

  it("2 honest CLI workers and 1 liar, 40 jobs with quorum 2: all succeed with the honest result; the liar's streak is 0, its credit 0", async () => {
    const farm = suite.farm();
    const [honestA, honestB, liarKey] = farm.seeded.workerKeys;
    const liarId = farm.seeded.workerIds[2];
    // the liar starts first, so it takes first instances as well as second ones
    const liar = startLiar(farm, liarKey);
    const client = connect(farm);
    const jobs = Array.from({ length: 40 }, (_, n) => ({ type: "demo.echo", payload: { n, square: n * n }, validation: { quorum: 2 } }));
    const ids: Array<Id<"jobs">> = await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs });
    await sleep(300);
    await suite.startClis([honestA, honestB]);
    const rows = await waitForJobs(farm, ids, 150_000);
    await liar.stop();
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
    expect(rows.map((r): unknown => r.result)).toEqual(jobs.map((j) => j.payload));
    expect(liar.acted()).toBeGreaterThan(0);

    const { streaks, credit, instances } = await farm.server.t.run(async (ctx) => ({
      streaks: await ctx.db.query("trustStreaks").collect(),
      credit: await ctx.db
        .query("creditTotals")
        .withIndex("by_worker", (q) => q.eq("workerId", liarId))
        .unique(),
      instances: await ctx.db.query("jobInstances").collect(),
    }));
    const liarStreak = streaks.find((s) => s.workerId === liarId);
    expect(liarStreak).toMatchObject({ type: "demo.echo", streak: 0 });
    expect(liarStreak!.invalid).toBeGreaterThan(0);
    expect(credit?.cpuMs ?? 0).toBe(0);
    expect(credit?.jobs ?? 0).toBe(0);
    // every lie was caught: none valid, none credited; every job has two valid honest instances
    const lies = instances.filter((i) => i.workerId === liarId && i.status === "completed");
    expect(lies.length).toBe(liar.acted());
    expect(lies.every((i) => i.valid === false && i.credit === "denied")).toBe(true);
    for (const id of ids) expect(instances.filter((i) => i.jobId === id && i.valid === true).length).toBe(2);
    // the honest workers each hold a streak of the jobs they validated
    for (const honestId of farm.seeded.workerIds.slice(0, 2)) expect(streaks.find((s) => s.workerId === honestId)?.streak ?? 0).toBeGreaterThan(0);

    for (const run of suite.clis) run.child.kill("SIGINT");
    for (const run of suite.clis) expect(await run.exited).toBe(0);
  }, 240_000);
});
