import { join } from "node:path";
import { ConvexClient } from "convex/browser";
import { api } from "../../convex/_generated/api";
import type { Doc, Id } from "../../convex/_generated/dataModel";
import { errorOf, payloadOf, resultOf } from "../../convex/core/bodies";
import { createBuiltinRegistry, isolatedHandler, type Recipe } from "../../extension/handlers";
import { convexFarmClient } from "../../extension/worker/farmClient";
import { Worker, type WorkerOptions } from "../../extension/worker/worker";
import { seed, startTestServer, type Seeded, type TestServer } from "../server";

const fixtureJobs = join(__dirname, "fixtures", "jobs.ts");

export type Farm = { server: TestServer; seeded: Seeded; clients: ConvexClient[]; workers: Worker[]; closers: Array<() => void> };

/** `capabilities`: granted to the seeded workers beside demo.echo and demo.primes (e.g. demo.slow). */
export async function startFarm(workerCount: number, maxConcurrentJobs = 4, capabilities?: string[]): Promise<Farm> {
  const server = await startTestServer();
  const seeded = await seed(server, workerCount, { maxConcurrentJobs, capabilities });
  return { server, seeded, clients: [], workers: [], closers: [] };
}

export function connect(farm: Farm): ConvexClient {
  const client = new ConvexClient(farm.server.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  farm.clients.push(client);
  return client;
}

/** An engine with the built-in handlers plus the test fixtures, all in child processes. */
export function engineWorker(
  farm: Farm,
  index: number,
  options: Partial<WorkerOptions> & { recipes?: Recipe[]; fixtureTimeoutMs?: number; graceMs?: number } = {},
): Worker {
  // Job processes at normal priority: these tests are about the engine, not politeness (test/unit/handlers/processPool
  // checks the lowered priority), and at the shipped niceness a job on a busy machine gets next to no CPU.
  const { registry, pool } = createBuiltinRegistry({ ollama: false, recipes: options.recipes, pool: { graceMs: options.graceMs ?? 500, niceness: 0 } });
  for (const name of ["throws", "killsItself", "hangs", "bigResult", "waitsForAbort"]) {
    registry.register(
      isolatedHandler(pool, {
        type: `test.${name.toLowerCase()}`,
        impl: { module: fixtureJobs, exportName: name },
        timeoutMs: name === "hangs" ? options.fixtureTimeoutMs : undefined,
      }),
    );
  }
  const worker = new Worker({
    client: convexFarmClient(connect(farm), farm.seeded.workerKeys[index]),
    handlers: registry,
    graceMs: options.graceMs ?? 500,
    ...options,
  });
  farm.workers.push(worker);
  farm.closers.push(() => pool.close());
  return worker;
}

export async function stopFarm(farm: Farm): Promise<void> {
  await Promise.all(farm.workers.map((w) => w.stop()));
  for (const close of farm.closers) close();
  await Promise.all(farm.clients.map((c) => c.close()));
  await farm.server.close();
}

export type JobSpec = { type: string; payload?: unknown; leaseMs?: number; maxAttempts?: number; requiredCapabilities?: string[] };

export async function submit(farm: Farm, jobs: JobSpec[]): Promise<Array<Id<"jobs">>> {
  const client = farm.clients[0] ?? connect(farm);
  const ids: Array<Id<"jobs">> = [];
  for (let i = 0; i < jobs.length; i += 200) {
    ids.push(...(await client.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs: jobs.slice(i, i + 200) })));
  }
  return ids;
}

export type JobRow = Doc<"jobs">;
export type EventRow = Doc<"jobEvents">;

/** The jobs' own rows (no bodies: payload, result and a long error are beside them). */
export async function jobRowsOf(farm: Farm, ids: Array<Id<"jobs">>): Promise<JobRow[]> {
  return farm.server.t.run(async (ctx) =>
    Promise.all(
      ids.map(async (id) => {
        const row = await ctx.db.get(id);
        if (!row) throw new Error(`job ${id} is not in the queue`);
        return row;
      }),
    ),
  );
}

/** The jobs' rows with their bodies (payload, result, error) joined in from beside them, as readers see them. */
export async function jobsOf(farm: Farm, ids: Array<Id<"jobs">>): Promise<JobRow[]> {
  return farm.server.t.run(async (ctx) =>
    Promise.all(
      ids.map(async (id) => {
        const row = await ctx.db.get(id);
        if (!row) throw new Error(`job ${id} is not in the queue`);
        return { ...row, payload: await payloadOf(ctx, row), result: await resultOf(ctx, row), error: await errorOf(ctx, row) };
      }),
    ),
  );
}

export async function eventsOf(farm: Farm, ids: Array<Id<"jobs">>): Promise<EventRow[]> {
  return farm.server.t.run(async (ctx) => {
    const all: EventRow[] = [];
    for (const id of ids) all.push(...(await ctx.db.query("jobEvents").withIndex("by_job", (q) => q.eq("jobId", id)).collect()));
    return all;
  });
}

/** Poll the data (in the test process only) until every job reaches a final status. */
export async function waitForJobs(farm: Farm, ids: Array<Id<"jobs">>, timeoutMs = 45_000, done = isFinal): Promise<JobRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // the rows alone while polling; their bodies once, at the end
    const rows = await jobRowsOf(farm, ids);
    if (rows.every((r) => done(r))) return await jobsOf(farm, ids);
    if (Date.now() > deadline) {
      const counts = rows.reduce<Record<string, number>>((acc, r) => ((acc[r.status] = (acc[r.status] ?? 0) + 1), acc), {});
      throw new Error(`jobs did not finish in ${timeoutMs} ms: ${JSON.stringify(counts)}`);
    }
    await sleep(100);
  }
}

function isFinal(row: JobRow): boolean {
  return row.status === "succeeded" || row.status === "canceled" || row.status === "dead";
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
