import { afterEach, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { LIMITS } from "../../convex/core/limits";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { connect, jobRowsOf, jobsOf, sleep, startFarm, stopFarm, type Farm } from "./helpers";

// Real sizes end to end: 270 jobs of 240 KiB in 3 lanes wait before any worker starts; 2 real CLI workers
// (farmhand-worker) claim them within their claims' byte budgets, echo them back, and every result arrives
// whole. The queue keeps flowing: a small job submitted afterwards runs at once.

const JOBS = 270;
const BYTES = 240 * 1024;
// the three lanes: the same type, three requirement classes
const LANES = [undefined, { minCores: 1 }, { minMemoryMB: 64 }];

const body = (i: number) => ({ i, data: `${i}:`.padEnd(BYTES, String.fromCharCode(97 + (i % 26))) });

describe("big bodies through real CLI workers", () => {
  let farm: Farm;
  const runs: CliRun[] = [];
  afterEach(async () => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await stopFarm(farm);
  });

  it("270 queued jobs of 240 KiB in 3 lanes all succeed with their results whole; a small job afterwards runs at once", async () => {
    farm = await startFarm(2, 4);
    const client = connect(farm);
    const ids: Array<Id<"jobs">> = [];
    const perBatch = Math.floor(LIMITS.batchPayloadBytes / (BYTES + 64));
    for (let start = 0; start < JOBS; start += perBatch) {
      const jobs = Array.from({ length: Math.min(perBatch, JOBS - start) }, (_, k) => {
        const i = start + k;
        const requirements = LANES[i % LANES.length];
        return { type: "demo.echo", payload: body(i), leaseMs: 30_000, ...(requirements ? { requirements } : {}) };
      });
      ids.push(...(await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs })));
    }
    expect(ids).toHaveLength(JOBS);

    for (const key of farm.seeded.workerKeys) {
      const run = spawnCli(["--url", farm.server.url, "--key", key, "--concurrency", "2"]);
      runs.push(run);
      await waitForLine(run, /working on/);
    }
    // a cold CLI starts its handler processes first: seconds on an idle machine, tens of seconds on a loaded one
    const started = Date.now();
    const deadline = started + 120_000;
    for (;;) {
      const rows = await jobRowsOf(farm, ids);
      if (rows.every((r) => r.status === "succeeded")) break;
      const failed = rows.filter((r) => r.status === "dead" || r.status === "canceled");
      expect(failed.map((r) => r.error)).toEqual([]);
      if (Date.now() > deadline) throw new Error(`${rows.filter((r) => r.status === "succeeded").length} of ${JOBS} succeeded in time`);
      await sleep(250);
    }
    // every result whole, read as the submitter reads it (a few at a time: each is 240 KiB)
    for (let start = 0; start < JOBS; start += 10) {
      const rows = await jobsOf(farm, ids.slice(start, start + 10));
      rows.forEach((row, k) => expect(row.result).toEqual(body(start + k)));
    }
    const view = await client.query(api.jobs.get, { clientKey: farm.seeded.clientKey, jobId: ids[JOBS - 1] });
    expect(view?.result).toEqual(body(JOBS - 1));

    const drained = Date.now() - started;
    const submitted = Date.now();
    const [small] = await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs: [{ type: "demo.echo", payload: { n: 1 } }] });
    for (;;) {
      const [row] = await jobRowsOf(farm, [small]);
      if (row.status === "succeeded") break;
      if (Date.now() - submitted > 5_000) throw new Error(`the small job is still ${row.status} after 5 s`);
      await sleep(25);
    }
    console.log(`${JOBS} jobs of ${BYTES} B done ${drained} ms after the workers started; a small job after them took ${Date.now() - submitted} ms`);

    for (const run of runs) run.child.kill("SIGINT");
    for (const run of runs) expect(await run.exited).toBe(0);
  }, 180_000);
});
