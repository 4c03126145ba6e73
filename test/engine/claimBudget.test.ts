import { afterEach, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import { APP_LIMITS } from "../../convex/core/appLimits";
import { LIMITS } from "../../convex/core/limits";
import { convexFarmClient, type ClaimedJob, type FarmClient } from "../../extension/worker/farmClient";
import { connect, engineWorker, eventsOf, jobsOf, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

// A claim hands out at most LIMITS.claimCheckpointChars of checkpoints; a real engine whose claim comes back
// with fewer jobs than its offers must still take every one of them (the rest wait offered to it, or ready).

const JOBS = 12;

describe("an engine and the claim's checkpoint budget", { timeout: 120_000 }, () => {
  let farm: Farm | undefined;
  afterEach(async () => {
    if (farm) await stopFarm(farm);
    farm = undefined;
  });

  it("runs 12 resumed jobs with 512 KiB checkpoints each, over several claims, every one once", async () => {
    farm = await startFarm(2, LIMITS.maxConcurrentJobs);
    const client = connect(farm);
    const ids = await submit(farm, Array.from({ length: JOBS }, (_, i) => ({ type: "demo.echo", payload: { i } })));
    // an earlier donor ran each, saved the largest checkpoint and gave it back
    const earlier = farm.seeded.workerKeys[1];
    const running = await client.mutation(api.workers.claim, { apiKey: earlier, capabilities: ["demo.echo"], max: JOBS });
    expect(running).toHaveLength(JOBS);
    const checkpoint = Buffer.alloc(APP_LIMITS.checkpointBytesMax, 1).toString("base64");
    for (const job of running) await client.mutation(api.workers.checkpoint, { apiKey: earlier, leaseId: job.leaseId, data: checkpoint });
    for (const job of running) await client.mutation(api.workers.release, { apiKey: earlier, leaseId: job.leaseId, slots: 0 });

    // what each of the engine's claims brought back
    const claims: ClaimedJob[][] = [];
    const inner = convexFarmClient(connect(farm), farm.seeded.workerKeys[0]);
    const recording: FarmClient = {
      ...inner,
      claim: async (args) => {
        const jobs = await inner.claim(args);
        claims.push(jobs);
        return jobs;
      },
    };
    await engineWorker(farm, 0, { concurrency: JOBS, client: recording }).start();
    const rows = await waitForJobs(farm, ids);
    expect(rows.map((r) => r.status)).toEqual(Array.from({ length: JOBS }, () => "succeeded"));
    // each claimed twice: by the earlier donor, then once by the engine
    const claimed = (await eventsOf(farm, ids)).filter((e) => e.kind === "claimed");
    for (const id of ids) expect(claimed.filter((e) => e.jobId === id)).toHaveLength(2);
    const taken = claims.filter((c) => c.length > 0);
    expect(taken.length).toBeGreaterThan(1);
    for (const c of taken) expect(c.reduce((n, j) => n + (j.checkpoint?.length ?? 0), 0)).toBeLessThanOrEqual(LIMITS.claimCheckpointChars);
    expect(taken.flat().every((j) => j.checkpoint === checkpoint)).toBe(true);
    expect((await jobsOf(farm, ids)).map((r): unknown => r.result)).toEqual(ids.map((_, i) => ({ i })));
  });
});
