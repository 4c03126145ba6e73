// A saturated farm on the loopback server: 40 busy workers draining a deep queue of demo.echo jobs, for Farmhand
// and for the seed-style design (bench/seedStyle), on the table-walking server or on stock convex-test.
import { api } from "../../convex/_generated/api";
import { api as seedApi } from "../seedStyle/convex/_generated/api";
import { engine, newClient } from "./engines";
import { ServerProcess, type Stats } from "./serverProcess";
import { SeedStyleWorker } from "./seedWorkers";

export const SATURATED_WORKERS = 40;

export type SaturatedOptions = { queue: number; windowMs: number; stockScan: boolean };
export type Saturated = { claims: number; claimConflicts: number; jobsPerSecond: number; jobs: number; stats: Stats };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function inGroups<T>(items: T[], each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += 20) await Promise.all(items.slice(i, i + 20).map(each));
}

export async function farmhandSaturated({ queue, windowMs, stockScan }: SaturatedOptions): Promise<Saturated> {
  const server = await ServerProcess.start(["--seed", String(SATURATED_WORKERS)], { stockScan });
  const { clientKey, workerKeys } = server.seeded as Required<typeof server.seeded>;
  const submitter = newClient(server.url);
  const engines = workerKeys.map((key) => engine(server.url, key, { real: false }));
  let done = 0;
  for (const e of engines) e.worker.on("jobFinished", () => done++);
  try {
    for (let i = 0; i < queue; i += 250) {
      await submitter.mutation(api.jobs.submitBatch, { clientKey, jobs: Array.from({ length: 250 }, (_, k) => ({ type: "demo.echo", payload: { k: i + k } })) });
    }
    await inGroups(engines, (e) => e.worker.start());
    await sleep(4_000); // past the start, when every engine's first claim reads the heads at once
    return await measure(server, "workers:claim", windowMs, () => done);
  } finally {
    await inGroups(engines, (e) => e.close());
    await submitter.close();
    server.close();
  }
}

export async function seedStyleSaturated({ queue, windowMs, stockScan }: SaturatedOptions): Promise<Saturated> {
  const server = await ServerProcess.start(["--dir", "bench/seedStyle/convex"], { stockScan });
  const submitter = newClient(server.url);
  const workers = Array.from({ length: SATURATED_WORKERS }, (_, i) => new SeedStyleWorker(server.url, `w${i}`));
  try {
    for (let i = 0; i < queue; i += 250) {
      await submitter.mutation(seedApi.queue.submitBatch, { jobs: Array.from({ length: 250 }, () => ({ type: "demo.echo", requiredCapabilities: ["demo.echo"] })) });
    }
    for (const w of workers) w.start();
    await sleep(4_000);
    return await measure(server, "queue:claim", windowMs, () => workers.reduce((s, w) => s + w.finished, 0));
  } finally {
    await inGroups(workers, (w) => Promise.resolve(w.close()));
    await submitter.close();
    server.close();
  }
}

async function measure(server: ServerProcess, claimName: string, windowMs: number, finished: () => number): Promise<Saturated> {
  await server.resetStats();
  const before = finished();
  const t0 = performance.now();
  await sleep(windowMs);
  const stats = await server.stats();
  const seconds = (performance.now() - t0) / 1000;
  const jobs = finished() - before;
  const claim = stats.functions[claimName] ?? { calls: 0, conflicts: 0, pushes: 0 };
  return { claims: claim.calls, claimConflicts: claim.conflicts, jobsPerSecond: jobs / seconds, jobs, stats };
}

/** Is `convex/<module>.ts`'s export `name` a mutation (public or internal)? Queries never conflict. */
async function isMutation(path: string): Promise<boolean> {
  const [module, name] = path.split(":");
  if (!name || !/^[a-zA-Z]+$/.test(module)) return false;
  const exports = (await import(`../../convex/${module}.ts`)) as Record<string, { isMutation?: boolean } | undefined>;
  return exports[name]?.isMutation === true;
}

export type MutationConflicts = { executions: number; conflicts: number; byFunction: Record<string, { calls: number; conflicts: number }> };

/** Every mutation execution in a stats answer (scheduled ones included) and its would-be OCC conflicts. */
export async function mutationConflicts(stats: Stats): Promise<MutationConflicts> {
  const byFunction: MutationConflicts["byFunction"] = {};
  let executions = 0;
  let conflicts = 0;
  for (const [name, f] of Object.entries(stats.functions)) {
    if (!(await isMutation(name))) continue;
    byFunction[name] = { calls: f.calls, conflicts: f.conflicts };
    executions += f.calls;
    conflicts += f.conflicts;
  }
  return { executions, conflicts, byFunction };
}
