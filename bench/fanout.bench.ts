// The fan-out benchmark (issues 9 and 18): what a job costs with 10 to 1,000 idle donors, open views, an idle
// farm, and offers to dead or cut-off workers — Farmhand's queue against the seed-style design (bench/seedStyle:
// everyone watches one flag, everyone claims) in the same run. Every count comes from the loopback server's
// instruments (GET /__testserver/stats): executions of every function, scheduled ones and subscription re-runs
// included, pushes, and would-be OCC conflicts. Saturation is bench/contention.bench.ts; the five-minute idle
// soak and the stock-server reference are bench/soak.bench.ts (`npm run bench:soak`).
import { afterAll, beforeAll, describe, it } from "vitest";
import { getFunctionName } from "convex/server";
import { api } from "../convex/_generated/api";
import { DONOR_VIEW_QUERIES } from "../extension/donor/viewQueries";
import { LIMITS, TIMING } from "../convex/core/limits";
import { api as seedApi } from "./seedStyle/convex/_generated/api";
import { spawnCli } from "../test/engine/cliProcess";
import { CutProxy } from "../test/engine/cutProxy";
import { engine, newClient, type Engine } from "./fanout/engines";
import { ServerProcess, totals } from "./fanout/serverProcess";
import { SeedStyleWorker } from "./fanout/seedWorkers";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/fanout.bench.ts", "bench/fanout", "bench/seedStyle", "convex", "extension/worker", "extension/donor/viewQueries.ts", "test/server"];

const figures: Record<string, Figure> = {};
/**
 * Every scenario's loopback server walks only the queried table (test/server/tableScan.ts), as a deployment's
 * index read would, for both designs.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** A figure with its target and verdict, printed as it is measured. */
function figure(name: string, value: number, unit: string, target?: string, pass?: boolean): void {
  figures[name] = { value, unit, target, pass };
  const verdict = pass === undefined ? "" : pass ? "  PASS" : "  FAIL";
  console.log(`fanout · ${name}: ${value} ${unit}${target ? `  (target ${target})` : ""}${verdict}`);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Start engines a few at a time (hundreds of sockets opening at once only measure the machine). */
async function startAll(engines: Engine[]): Promise<void> {
  for (let i = 0; i < engines.length; i += 20) await Promise.all(engines.slice(i, i + 20).map((e) => e.worker.start()));
}

async function closeAll(closers: Array<{ close(): Promise<void> | void }>): Promise<void> {
  for (let i = 0; i < closers.length; i += 20) await Promise.all(closers.slice(i, i + 20).map((c) => Promise.resolve(c.close())));
}

// ---------------------------------------------------------------------------------------------------------------
// Idle farm: jobs one at a time, counted from the submit to one second after the job succeeded.

type PerJob = { calls: number; pushes: number; pickupMs: number; byFunction: Record<string, number> };

function summarise(jobs: PerJob[]) {
  const avg = (f: (j: PerJob) => number) => jobs.reduce((s, j) => s + f(j), 0) / jobs.length;
  return { calls: avg((j) => j.calls), pushes: avg((j) => j.pushes), maxCalls: Math.max(...jobs.map((j) => j.calls)), pickupP50: median(jobs.map((j) => j.pickupMs)) };
}

const JOBS_PER_FARM = 6;
/** Farm sizes; the seed-style design's cost grows with N, so it is measured up to 200 only. */
const FARM_SIZES = [10, 50, 200, 1_000];
const SEED_STYLE_SIZES = new Set([10, 50, 200]);

/**
 * The lane's first job is counted apart: the submit that makes the lane has it learn the N workers already waiting
 * (dispatch:backfill, LIMITS.laneBackfill per run), once per lane. The jobs after it are the steady cost per job.
 */
async function farmhandIdleFarm(n: number): Promise<{ first: PerJob; jobs: PerJob[] }> {
  const server = await ServerProcess.start(["--seed", String(n)]);
  const { clientKey, workerKeys } = server.seeded as Required<typeof server.seeded>;
  // demo.echo in-process for every size, so farms differ only in N (a handler process's start under load adds
  // heartbeats and summary refreshes that have nothing to do with the farm's size)
  const engines = workerKeys.map((key) => engine(server.url, key, { real: false }));
  const submitter = newClient(server.url);
  const started = new Map<string, number>();
  const finished = new Set<string>();
  for (const e of engines) {
    e.worker.on("jobStarted", (x) => started.set(x.jobId, performance.now()));
    e.worker.on("jobFinished", (x) => finished.add(x.jobId));
  }
  try {
    await startAll(engines);
    // every engine's first claim has found nothing: they all wait
    await until(async () => ((await server.stats()).functions["workers:claim"]?.calls ?? 0) >= n, 180_000, "engines waiting");
    await sleep(1_500);
    const jobs: PerJob[] = [];
    for (let j = 0; j <= JOBS_PER_FARM; j++) {
      await server.resetStats();
      const t0 = performance.now();
      const jobId: string = await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: { j } });
      await until(() => finished.has(jobId), 60_000, `job ${j} at N=${n}`);
      await sleep(1_000);
      const stats = await server.stats();
      // the submitter's own call is left out
      const { calls, pushes } = totals(stats, (name) => name === "jobs:submit");
      const byFunction = Object.fromEntries(Object.entries(stats.functions).map(([k, v]) => [k, v.calls]));
      jobs.push({ calls, pushes, pickupMs: started.get(jobId)! - t0, byFunction });
    }
    const [first, ...rest] = jobs;
    console.log(`fanout · farmhand N=${n}, executions by function, the lane's first job:`, JSON.stringify(first.byFunction));
    console.log(`fanout · farmhand N=${n}, executions by function over the next ${JOBS_PER_FARM} jobs:`, JSON.stringify(addUp(rest)));
    return { first, jobs: rest };
  } finally {
    await closeAll(engines);
    await submitter.close();
    server.close();
  }
}

function addUp(jobs: PerJob[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const j of jobs) for (const [k, v] of Object.entries(j.byFunction)) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}

async function seedStyleIdleFarm(n: number): Promise<PerJob[]> {
  const server = await ServerProcess.start(["--dir", "bench/seedStyle/convex"]);
  const workers = Array.from({ length: n }, (_, i) => new SeedStyleWorker(server.url, `w${i}`));
  const submitter = newClient(server.url);
  const started = new Map<string, number>();
  const finished = new Set<string>();
  for (const w of workers) {
    w.onStarted = (id) => started.set(id, performance.now());
    w.onFinished = (id) => finished.add(id);
    w.start();
  }
  try {
    await until(async () => ((await server.stats()).functions["queue:watch"]?.pushes ?? 0) >= n, 60_000, "seed-style workers watching");
    await sleep(1_000);
    const jobs: PerJob[] = [];
    for (let j = 0; j < JOBS_PER_FARM; j++) {
      await server.resetStats();
      const t0 = performance.now();
      const jobId: string = await submitter.mutation(seedApi.queue.submit, { type: "demo.echo", requiredCapabilities: ["demo.echo"] });
      await until(() => finished.has(jobId), 60_000, `seed-style job ${j} at N=${n}`);
      await sleep(1_000);
      const stats = await server.stats();
      const { calls, pushes } = totals(stats, (name) => name === "queue:submit");
      const byFunction = Object.fromEntries(Object.entries(stats.functions).map(([k, v]) => [k, v.calls]));
      jobs.push({ calls, pushes, pickupMs: started.get(jobId)! - t0, byFunction });
    }
    return jobs;
  } finally {
    await closeAll(workers);
    await submitter.close();
    server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

describe("fan-out bench", () => {
  // Idle on its own server while the other scenarios run on theirs: nothing but presence may reach it.
  const IDLE_WORKERS = 50;
  let idle: { server: ServerProcess; engines: Engine[]; startedAt: number } | undefined;

  beforeAll(async () => {
    const server = await ServerProcess.start(["--seed", String(IDLE_WORKERS)]);
    const engines = server.seeded.workerKeys!.map((key) => engine(server.url, key, { real: false }));
    await startAll(engines);
    await until(async () => ((await server.stats()).functions["workers:claim"]?.calls ?? 0) >= IDLE_WORKERS, 60_000, "idle engines waiting");
    await sleep(2_000);
    await server.resetStats();
    idle = { server, engines, startedAt: performance.now() };
  });

  afterAll(async () => {
    if (idle) {
      await closeAll(idle.engines);
      idle.server.close();
    }
    saveFigures("fanout", figures, MEASURES);
  });

  it("idle farm: executions and pushes per job with 10 to 1,000 donors, against the seed-style design", async () => {
    const ours: Record<number, ReturnType<typeof summarise>> = {};
    const seed: Record<number, ReturnType<typeof summarise>> = {};
    for (const n of FARM_SIZES) {
      const farm = await farmhandIdleFarm(n);
      ours[n] = summarise(farm.jobs);
      const firstAllowed = 15 + Math.ceil(n / LIMITS.laneBackfill);
      figure(
        `idle_farm_N${n}_first_job_executions`,
        farm.first.calls,
        `executions for the lane's first job (the new lane learns the ${n} waiting workers, ${LIMITS.laneBackfill} per run, once per lane)`,
        `≤ 15 + ⌈N / ${LIMITS.laneBackfill}⌉ (${firstAllowed})`,
        farm.first.calls <= firstAllowed,
      );
      figure(`idle_farm_N${n}_executions_per_job`, round(ours[n].calls), "executions/job", "≤ 15", ours[n].maxCalls <= 15 && ours[n].calls <= 15);
      figure(`idle_farm_N${n}_pushes_per_job`, round(ours[n].pushes), "pushes/job", "≤ 6", ours[n].pushes <= 6);
      if (!SEED_STYLE_SIZES.has(n)) continue;
      seed[n] = summarise(await seedStyleIdleFarm(n));
      figure(`idle_farm_N${n}_executions_per_job_seed_style`, round(seed[n].calls), "executions/job");
      figure(`idle_farm_N${n}_pushes_per_job_seed_style`, round(seed[n].pushes), "pushes/job");
      figure(`idle_farm_N${n}_ratio_seed_style_to_farmhand`, round(seed[n].calls / ours[n].calls), "× executions");
    }
    const smallest = FARM_SIZES[0];
    const largest = FARM_SIZES[FARM_SIZES.length - 1];
    // the steady cost, after each lane's first job
    const spread = (f: (s: ReturnType<typeof summarise>) => number) => Math.max(...FARM_SIZES.map((n) => f(ours[n]))) - Math.min(...FARM_SIZES.map((n) => f(ours[n])));
    const calls = spread((x) => x.calls);
    const pushes = spread((x) => x.pushes);
    figure(`idle_farm_executions_spread_N${smallest}_to_N${largest}`, round(calls), "executions/job (max − min over the farm sizes)", "flat: ≤ 2", calls <= 2);
    figure(`idle_farm_pushes_spread_N${smallest}_to_N${largest}`, round(pushes), "pushes/job (max − min over the farm sizes)", "flat: ≤ 1", pushes <= 1);
    figure("idle_farm_N200_pickup_p50", round(ours[200].pickupP50), "ms (submit → job started)", "≤ 50 ms", ours[200].pickupP50 <= 50);
    figure("idle_farm_N200_pickup_p50_seed_style", round(seed[200].pickupP50), "ms (submit → job started)");
    figure(`idle_farm_N${largest}_pickup_p50`, round(ours[largest].pickupP50), "ms (submit → job started; a timing: noisy on a shared machine)");
  });

  it("views: a donor view's subscriptions re-run at most once per open view per 5 s while jobs move", async () => {
    const VIEWS = 50;
    const WORKERS = 10;
    const server = await ServerProcess.start(["--seed", String(VIEWS)]);
    const { clientKey, workerKeys } = server.seeded as Required<typeof server.seeded>;
    const engines = workerKeys.slice(0, WORKERS).map((key) => engine(server.url, key, { real: false }));
    // One view per machine, each subscribing to exactly what the extension's views do (extension/donor/viewQueries.ts);
    // WORKERS of the machines are working, so their own jobs end all the time.
    const views = workerKeys.map((apiKey) => {
      const client = newClient(server.url);
      const unsubscribes = DONOR_VIEW_QUERIES.map((query) => client.onUpdate(query, { apiKey }, () => undefined));
      return { close: async () => (unsubscribes.forEach((u) => u()), await client.close()) };
    });
    const submitter = newClient(server.url);
    let streaming = true;
    const stream = (async () => {
      while (streaming) {
        await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: {} });
        await sleep(100);
      }
    })();
    try {
      await startAll(engines);
      await sleep(4_000);
      await server.resetStats();
      const windowMs = 15_000;
      await sleep(windowMs);
      const stats = await server.stats();
      const names = DONOR_VIEW_QUERIES.map((query) => getFunctionName(query));
      const runs = names.reduce((sum, name) => sum + (stats.functions[name]?.calls ?? 0), 0);
      const perView = runs / VIEWS;
      const jobs = stats.functions["workers:complete"]?.calls ?? 0;
      // one run per 5 s: a window of W seconds holds at most W/5 + 1 of them
      const allowed = windowMs / 5_000 + 1;
      figure(
        "views_overview_runs_per_view",
        round(perView, 2),
        `runs per view of ${names.join(" + ")} in ${windowMs / 1000} s (${VIEWS} views open, ${WORKERS} of them of working machines; ${jobs} jobs done meanwhile)`,
        `≤ one per 5 s (${allowed})`,
        perView <= allowed && jobs > 0,
      );
    } finally {
      streaming = false;
      await stream;
      await closeAll([...engines, ...views]);
      await submitter.close();
      server.close();
    }
  });

  it("liveness: an offer to a SIGKILLed or cut-off worker reaches another waiting worker within the TTL + 1 s", async () => {
    const server = await ServerProcess.start(["--seed", "3"]);
    const { clientKey, workerKeys } = server.seeded as Required<typeof server.seeded>;
    const submitter = newClient(server.url);
    const survivor = engine(server.url, workerKeys[1], { real: false });
    const started = new Map<string, number>();
    survivor.worker.on("jobStarted", (x) => started.set(x.jobId, performance.now()));
    const proxy = await CutProxy.start(server.url);
    const laptop = engine(proxy.url, workerKeys[2], { real: false });
    let laptopConnected = false;
    laptop.worker.on("connection", (e) => (laptopConnected = e.connected));
    const passOn: Record<"sigkill" | "disconnected", number[]> = { sigkill: [], disconnected: [] };
    const runJob = async () => {
      const t0 = performance.now();
      const jobId: string = await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: {} });
      await until(() => started.has(jobId), 30_000, "the survivor starts the job");
      return started.get(jobId)! - t0;
    };
    const waiting = async (claimsBefore: number) =>
      until(async () => ((await server.stats()).functions["workers:claim"]?.calls ?? 0) > claimsBefore, 30_000, "a worker declared itself");
    try {
      await survivor.worker.start();
      for (let round = 0; round < 3; round++) {
        // SIGKILL: a CLI worker waits (the oldest in line), dies, and the next job is offered to it first.
        const claims = (await server.stats()).functions["workers:claim"]?.calls ?? 0;
        const cli = spawnCli(["--url", server.url, "--key", workerKeys[0]]);
        await waiting(claims);
        await sleep(300);
        await runJob(); // the survivor does one job and goes to the back of the line, behind the CLI worker
        cli.child.kill("SIGKILL");
        await cli.exited;
        passOn.sigkill.push(await runJob());
      }
      await laptop.worker.start();
      await until(() => laptopConnected, 30_000, "the laptop connects");
      for (let round = 0; round < 3; round++) {
        await sleep(500);
        await runJob(); // the survivor goes to the back of the line, behind the laptop
        proxy.disconnect();
        passOn.disconnected.push(await runJob());
        const claims = (await server.stats()).functions["workers:claim"]?.calls ?? 0;
        proxy.restore();
        await until(() => laptopConnected, 60_000, "the laptop reconnects");
        await waiting(claims); // back online, it claims in full and so waits again
      }
    } finally {
      await survivor.close();
      proxy.restore();
      await laptop.close();
      await proxy.close();
      await submitter.close();
      server.close();
    }
    const limit = TIMING.offerTtlMs + 1_000;
    for (const kind of ["sigkill", "disconnected"] as const) {
      const worst = Math.max(...passOn[kind]);
      figure(`liveness_${kind}_offer_reaches_another_worker_max`, Math.round(worst), `ms over 3 rounds (offer TTL ${TIMING.offerTtlMs} ms)`, `≤ TTL + 1 s (${limit} ms)`, worst <= limit);
    }
  });

  it("idle: an idle farm's engines make no calls and its summary does not refresh while nothing changes", async () => {
    const { server, startedAt } = idle!;
    const stats = await server.stats();
    const minutes = (performance.now() - startedAt) / 60_000;
    console.log("fanout · idle window executions:", JSON.stringify(stats.functions));
    // Presence (one call per worker per TIMING.presenceEveryMs) is measured over five minutes by the soak.
    const workerCalls = Object.entries(stats.functions).filter(([name]) => name.startsWith("workers:") && name !== "workers:presence");
    const otherWorkerCalls = workerCalls.reduce((s, [, f]) => s + f.calls, 0);
    figure("idle_other_worker_calls", otherWorkerCalls, `calls (anything but presence, doorbell re-runs included; ${IDLE_WORKERS} idle engines, ${round(minutes, 1)} min)`, "0", otherWorkerCalls === 0 && minutes >= 1);
    const serverRuns = Object.entries(stats.functions).filter(([name]) => !name.startsWith("workers:")).reduce((s, [, f]) => s + f.calls, 0);
    const allowed = Math.ceil((minutes * 60_000) / TIMING.summaryPresenceDelayMs);
    figure("idle_summary_refreshes", serverRuns, `runs (the presence calls' summary refreshes, farm-wide, in ${round(minutes, 1)} min)`, `≤ 1 per ${TIMING.summaryPresenceDelayMs / 1000} s (${allowed})`, serverRuns <= allowed);
  });
});
