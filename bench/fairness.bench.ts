// Fair share under load (docs/API.md "Sharing the farm"): 40 busy engines on the loopback server.
// 1. Key A queues 5,000 jobs, key B 50 a few seconds later: B's p95 wait against its fair-share ideal (half the
//    farm's throughput for its 50 jobs), with the FIFO baseline in the same run (A and B one key: B waits for A).
// 2. Weights 3:1, both backlogged: the share each gets of the jobs started in a window.
// 3. Executions per job and would-be OCC conflicts over all mutations with two keys and 100 fairness keys, beside
//    one key (today's order) in the same run.
import { expect, it } from "vitest";
import { api } from "../convex/_generated/api";
import { engine, newClient, type Engine } from "./fanout/engines";
import { mutationConflicts, SATURATED_WORKERS } from "./fanout/saturated";
import { ServerProcess, totals } from "./fanout/serverProcess";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/fairness.bench.ts", "bench/fanout", "convex", "extension/worker", "test/server"];

const A_QUEUE = 5_000;
const B_JOBS = 50;
const WINDOW_MS = 15_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 2) => Number(n.toFixed(digits));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];

type Busy = { server: ServerProcess; engines: Engine[]; started: Map<string, number>; close: () => Promise<void> };

/** 40 engines (demo.echo in-process, one job at a time) working for the server's org; `started`: when each job began. */
async function busyFarm(): Promise<Busy> {
  const server = await ServerProcess.start(["--seed", String(SATURATED_WORKERS)]);
  const engines = server.seeded.workerKeys!.map((key) => engine(server.url, key, { real: false }));
  const started = new Map<string, number>();
  for (const e of engines) e.worker.on("jobStarted", (x) => started.set(x.jobId, performance.now()));
  return {
    server,
    engines,
    started,
    close: async () => {
      for (let i = 0; i < engines.length; i += 20) await Promise.all(engines.slice(i, i + 20).map((e) => e.close()));
      server.close();
    },
  };
}

async function startEngines(engines: Engine[]) {
  for (let i = 0; i < engines.length; i += 20) await Promise.all(engines.slice(i, i + 20).map((e) => e.worker.start()));
}

type Spec = { type: string; payload: unknown; fairnessKey?: string };

async function submitAll(url: string, clientKey: string, specs: Spec[]): Promise<string[]> {
  const client = newClient(url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < specs.length; i += 250) ids.push(...(await client.mutation(api.jobs.submitBatch, { clientKey, jobs: specs.slice(i, i + 250) })));
    return ids;
  } finally {
    await client.close();
  }
}

const echo = (n: number, fairnessKey?: string): Spec => ({ type: "demo.echo", payload: { n }, ...(fairnessKey ? { fairnessKey } : {}) });

/**
 * A queues 5,000, the engines start, B queues 50 five seconds later; B's waits (ms from its submit to each job's
 * start), the farm's throughput meanwhile (jobs/s started), and how many of A's jobs were still to start then.
 */
async function latecomer(shared: boolean): Promise<{ waits: number[]; jobsPerSecond: number; aLeftAtB: number }> {
  const farm = await busyFarm();
  try {
    const { clientKey, publishKey } = farm.server.seeded;
    const aIds = await submitAll(farm.server.url, clientKey!, Array.from({ length: A_QUEUE }, (_, i) => echo(i)));
    await startEngines(farm.engines);
    await sleep(5_000);
    const bAt = performance.now();
    // shared: B is a client key of its own (the publishing key of the seeded org); else B's jobs are A's later ones
    const bIds = await submitAll(farm.server.url, shared ? publishKey! : clientKey!, Array.from({ length: B_JOBS }, (_, i) => echo(i)));
    const aLeftAtB = aIds.filter((id) => !farm.started.has(id)).length;
    const deadline = performance.now() + 900_000;
    while (bIds.some((id) => !farm.started.has(id)) && performance.now() < deadline) await sleep(20);
    const waits = bIds.map((id) => (farm.started.get(id) ?? Number.NaN) - bAt);
    const lastB = Math.max(...waits) + bAt;
    const startedMeanwhile = [...farm.started.values()].filter((t) => t >= bAt && t <= lastB).length;
    const jobsPerSecond = startedMeanwhile / Math.max(0.001, (lastB - bAt) / 1000);
    console.log(`fairness · ${shared ? "two keys" : "one key (FIFO)"}: ${startedMeanwhile} jobs started while B's ran, ${aLeftAtB} of A's left when B came`);
    return { waits, jobsPerSecond, aLeftAtB };
  } finally {
    await farm.close();
  }
}

/** Weights 3:1, both keys backlogged: of the jobs started in a window, each key's count. */
async function weighted(): Promise<{ a: number; b: number }> {
  const farm = await busyFarm();
  try {
    const { clientKey, publishKey, operatorKey } = farm.server.seeded;
    const operator = newClient(farm.server.url);
    const keys = await operator.query(api.consoleAccess.list, { apiKey: operatorKey! });
    const a = keys.clientKeys.find((k) => k.name === "test client")!;
    await operator.mutation(api.consoleAccess.setClientKeyLimits, { apiKey: operatorKey!, clientKeyId: a.clientKeyId, weight: 3 });
    await operator.close();
    const aIds = new Set(await submitAll(farm.server.url, clientKey!, Array.from({ length: 3_000 }, (_, i) => echo(i))));
    const bIds = new Set(await submitAll(farm.server.url, publishKey!, Array.from({ length: 3_000 }, (_, i) => echo(i))));
    await startEngines(farm.engines);
    await sleep(3_000);
    const from = performance.now();
    await sleep(WINDOW_MS);
    const to = performance.now();
    const inWindow = [...farm.started].filter(([, t]) => t >= from && t < to).map(([id]) => id);
    return { a: inWindow.filter((id) => aIds.has(id)).length, b: inWindow.filter((id) => bIds.has(id)).length };
  } finally {
    await farm.close();
  }
}

/** A saturated farm: executions per job and would-be conflicts over a window, with one key or two and 100 fairness keys. */
async function saturated(fair: boolean) {
  const farm = await busyFarm();
  try {
    const { clientKey, publishKey } = farm.server.seeded;
    const half = 1_500;
    await submitAll(farm.server.url, clientKey!, Array.from({ length: half }, (_, i) => echo(i, fair ? `tenant-${i % 50}` : undefined)));
    await submitAll(farm.server.url, fair ? publishKey! : clientKey!, Array.from({ length: half }, (_, i) => echo(i, fair ? `user-${i % 50}` : undefined)));
    await startEngines(farm.engines);
    await sleep(4_000);
    await farm.server.resetStats();
    const before = farm.started.size;
    await sleep(WINDOW_MS);
    const stats = await farm.server.stats();
    const jobs = farm.started.size - before;
    const conflicts = await mutationConflicts(stats);
    const { calls } = totals(stats);
    console.log(`fairness · saturated, ${fair ? "two keys, 100 fairness keys" : "one key"}: mutations by function`, JSON.stringify(conflicts.byFunction));
    return { jobs, executionsPerJob: calls / Math.max(1, jobs), conflictShare: conflicts.conflicts / Math.max(1, conflicts.executions), executions: conflicts.executions, conflicts: conflicts.conflicts };
  } finally {
    await farm.close();
  }
}

it("fair share: a latecomer beside a deep queue, 3:1 weights, and the cost beside today's order", { timeout: 2_400_000 }, async () => {
  const figures: Record<string, Figure> = {};
  const fair = await latecomer(true);
  const fifo = await latecomer(false);
  // B's fair share is half the farm while A and B both wait: its k-th job ideally starts after k / (T/2) s
  const idealP95 = ((0.95 * B_JOBS) / (fair.jobsPerSecond / 2)) * 1000;
  const p95 = quantile(fair.waits, 0.95);
  figures.latecomer_b_p95_wait = { value: Math.round(p95), unit: `ms (B's 50 jobs behind A's ${A_QUEUE}; ideal p95 at its fair half of ${round(fair.jobsPerSecond, 1)} jobs/s: ${Math.round(idealP95)} ms)`, target: "≤ 2 × ideal", pass: p95 <= 2 * idealP95 };
  figures.latecomer_b_p95_over_ideal = { value: round(p95 / idealP95), unit: "× the fair-share ideal" };
  figures.latecomer_b_p95_wait_fifo = { value: Math.round(quantile(fifo.waits, 0.95)), unit: `ms (one key, FIFO: B waits for the ${fifo.aLeftAtB} of A's jobs left)` };
  figures.latecomer_fifo_over_fair = { value: round(quantile(fifo.waits, 0.95) / p95, 1), unit: "× (FIFO p95 / fair p95)", target: "> 1", pass: quantile(fifo.waits, 0.95) > p95 };

  const shares = await weighted();
  const share = shares.a / Math.max(1, shares.a + shares.b);
  figures.weights_3_to_1_share = { value: round(share * 100, 1), unit: `% of ${shares.a + shares.b} jobs started in ${WINDOW_MS / 1000} s to the weight-3 key`, target: "75 ± 2 %", pass: Math.abs(share - 0.75) <= 0.02 };

  const today = await saturated(false);
  const shared = await saturated(true);
  figures.saturated_one_key_executions_per_job = { value: round(today.executionsPerJob), unit: `executions/job (every function, ${today.jobs} jobs, ${SATURATED_WORKERS} busy workers)` };
  figures.saturated_fair_executions_per_job = {
    value: round(shared.executionsPerJob),
    unit: `executions/job (two keys, 100 fairness keys, ${shared.jobs} jobs)`,
    target: `≤ 1.2 × one key (${round(today.executionsPerJob * 1.2)})`,
    pass: shared.executionsPerJob <= today.executionsPerJob * 1.2,
  };
  figures.saturated_one_key_conflicts = { value: round(today.conflictShare * 100), unit: `% of ${today.executions} mutation executions (${today.conflicts} would-be OCC conflicts)`, target: "≤ 5 %", pass: today.conflictShare <= 0.05 };
  figures.saturated_fair_conflicts = { value: round(shared.conflictShare * 100), unit: `% of ${shared.executions} mutation executions (${shared.conflicts} would-be OCC conflicts)`, target: "≤ 5 %", pass: shared.conflictShare <= 0.05 };
  figures.saturated_fair_throughput_ratio = { value: round(shared.jobs / Math.max(1, today.jobs)), unit: "× one key's jobs in the same window (a timing: noisy on a shared machine)" };
  saveFigures("fairness", figures, MEASURES);
  expect(fair.waits.every((w) => Number.isFinite(w))).toBe(true);
});
