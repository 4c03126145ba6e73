// Issue 21: the hot batch row. Eight workers, each on its own connection, complete one job each of the same batch at
// the same moment, eight rounds over; how many of those completions would a deployment's OCC have retried (the loopback
// server's conflict audit, test/server/README.md)? With BATCH_BEFORE_DIR naming a copy of an older convex/ folder
// (e.g. `git archive <commit> convex`), the same is measured against it for comparison (BATCH_BEFORE_LABEL: what
// to call it in the figure).
import { ConvexClient } from "convex/browser";
import { api } from "../convex/_generated/api";
import { expect, it } from "vitest";
import { batchShardOf } from "../convex/pipelines/dependencies";
import { startTestServer } from "../test/server";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/batchContention.bench.ts", "convex", "test/server"];

const WORKERS = 8;
const ROUNDS = 8;

/**
 * The completions the batch's sharding cannot keep apart (pipelines/dependencies.ts), from the jobs' own shards: in each
 * round, every completion but one on a shard another completion of that round also writes, and each completion that
 * empties its shard (it then reads the batch's other shards, which the round's other completions write). A row every
 * completion shared would make it every completion but the first of each round.
 */
function shardingAllows(rounds: string[][]): number {
  const left = new Map<number, number>();
  for (const jobId of rounds.flat()) left.set(batchShardOf(jobId), (left.get(batchShardOf(jobId)) ?? 0) + 1);
  let allowed = 0;
  for (const round of rounds) {
    const written = new Set<number>();
    for (const jobId of round) {
      const shard = batchShardOf(jobId);
      left.set(shard, left.get(shard)! - 1);
      const shared = written.has(shard);
      written.add(shard);
      if (shared || (left.get(shard) === 0 && round.length > 1)) allowed++;
    }
  }
  return allowed;
}

async function concurrentCompletions(convexDir?: string) {
  const server = await startTestServer({ crons: false, conflictWindowMs: 50, ...(convexDir ? { convexDir } : {}) });
  const clients: ConvexClient[] = [];
  try {
    const seeded = await server.seed(WORKERS, { maxConcurrentJobs: ROUNDS });
    const submitter = new ConvexClient(server.url);
    clients.push(submitter);
    const jobs = Array.from({ length: WORKERS * ROUNDS }, (_, i) => ({ type: "demo.echo", batchId: "hot", payload: { i } }));
    await submitter.mutation(api.jobs.submitBatch, { clientKey: seeded.clientKey, jobs });
    await submitter.mutation(api.jobs.submit, { clientKey: seeded.clientKey, type: "demo.echo", dependsOn: { batch: "hot" } });
    const workers = seeded.workerKeys.map((apiKey) => {
      const client = new ConvexClient(server.url);
      clients.push(client);
      return { client, apiKey, leases: [] as string[], jobIds: [] as string[] };
    });
    for (const w of workers) {
      while (w.leases.length < ROUNDS) {
        const claims = await w.client.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["demo.echo"], max: ROUNDS - w.leases.length });
        if (claims.length === 0) throw new Error("a worker could not claim its share of the batch");
        w.leases.push(...claims.map((c) => c.leaseId));
        w.jobIds.push(...claims.map((c) => c.jobId));
      }
    }
    server.resetStats();
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(workers.map((w) => w.client.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: w.leases[round], result: { round } })));
    }
    const complete = server.stats().functions["workers:complete"] ?? { calls: 0, conflicts: 0 };
    const child = (await server.t.run(async (ctx) => await ctx.db.query("jobs").collect())).find((j) => j.dependsOn !== undefined);
    const rounds = Array.from({ length: ROUNDS }, (_, round) => workers.map((w) => w.jobIds[round]));
    return { calls: complete.calls, conflicts: complete.conflicts, released: child?.status === "pending", allowed: shardingAllows(rounds) };
  } finally {
    for (const client of clients) await client.close();
    await server.close();
  }
}

it(`${WORKERS} concurrent completions of one batch, ${ROUNDS} rounds: would-be OCC conflicts`, async () => {
  const now = await concurrentCompletions();
  console.log(`batch contention · sharded counters: ${now.conflicts} of ${now.calls} completions would conflict (the shards allow ${now.allowed}); child released: ${now.released}`);
  const figures: Record<string, Figure> = {
    batch_completion_conflicts: {
      value: now.conflicts,
      unit: `of ${now.calls} completions (${WORKERS} at once, ${ROUNDS} rounds, one batch with a waiting child; one shared row: ${(WORKERS - 1) * ROUNDS})`,
      target: `≤ ${now.allowed} (what the jobs' shards allow: a shard written twice in a round, a shard emptied)`,
      pass: now.conflicts <= now.allowed && now.released,
    },
  };
  const beforeDir = process.env.BATCH_BEFORE_DIR;
  if (beforeDir) {
    const before = await concurrentCompletions(beforeDir);
    console.log(`batch contention · ${beforeDir}: ${before.conflicts} of ${before.calls} completions would conflict; child released: ${before.released}`);
    const label = process.env.BATCH_BEFORE_LABEL ?? beforeDir;
    figures.batch_completion_conflicts_before = { value: before.conflicts, unit: `of ${before.calls} completions, the same load on ${label}` };
  }
  saveFigures("batch_contention", figures, MEASURES);
  expect(now.calls).toBe(WORKERS * ROUNDS);
}, 300_000);
