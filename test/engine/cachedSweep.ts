import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { connect, engineWorker, eventsOf, waitForJobs, type Farm } from "./helpers";

/**
 * A parameter sweep with repeats on the loopback server, run by real engine workers: `distinct` payloads, each
 * submitted `copies` times in a shuffled order, in chunks of 100, with or without `cache`. Returns the jobs, how many
 * runs the donors started (their `claimed` events), and the wall time until every job ended. `slow`: each job is a
 * one-second demo.slow (the donors' time, not the farm's bookkeeping, is what a hit saves) instead of demo.echo.
 */
export async function cachedSweep(farm: Farm, options: { distinct: number; copies: number; cache: boolean; workers: number; slow?: boolean }) {
  await farm.server.t.run(async (ctx) => await ctx.db.patch(farm.seeded.orgId, { cacheUnvalidated: true }));
  const workers = Array.from({ length: options.workers }, (_, i) => engineWorker(farm, i, { concurrency: 4 }));
  await Promise.all(workers.map((w) => w.start()));
  const payloads = Array.from({ length: options.distinct * options.copies }, (_, i) =>
    options.slow ? { seconds: 1, point: i % options.distinct } : { text: `point ${i % options.distinct}` },
  );
  // a fixed shuffle: repeats land in the same chunk as their first (single flight) or later (a cache hit)
  let seed = 7;
  for (let i = payloads.length - 1; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [payloads[i], payloads[j]] = [payloads[j], payloads[i]];
  }
  const client = connect(farm);
  const started = Date.now();
  const ids: Array<Id<"jobs">> = [];
  for (let i = 0; i < payloads.length; i += 100) {
    const jobs = payloads.slice(i, i + 100).map((payload) => ({ type: options.slow ? "demo.slow" : "demo.echo", payload, ...(options.cache ? { cache: true as const } : {}) }));
    ids.push(...(await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs })));
  }
  const rows = await waitForJobs(farm, ids, 170_000);
  const wallMs = Date.now() - started;
  const executions = (await eventsOf(farm, ids)).filter((e) => e.kind === "claimed").length;
  return { rows, executions, wallMs, ids };
}

/** Submit → succeeded of `count` cache hits, one at a time (ms each): the submit's answer, then the job read once it has ended. */
export async function hitLatencies(farm: Farm, count: number, payloadOf: (i: number) => unknown): Promise<number[]> {
  const client = connect(farm);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const jobId = await client.mutation(api.jobs.submit, { clientKey: farm.seeded.clientKey, type: "demo.echo", payload: payloadOf(i), cache: true });
    for (;;) {
      const job = await client.query(api.jobs.get, { clientKey: farm.seeded.clientKey, jobId });
      if (job?.status === "succeeded") break;
      if (!job || job.status === "dead" || job.status === "canceled") throw new Error(`hit ${jobId} ended ${job?.status}`);
    }
    times.push(performance.now() - t0);
  }
  return times;
}
