// Engine benchmarks: pickup latency, throughput, host CPU per job, event-loop delay under CPU-bound jobs,
// and idle calls. The loopback server runs in its own process so the host process measures only the engine.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ConvexClient } from "convex/browser";
import { anyApi } from "convex/server";
import * as esbuild from "esbuild";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createBuiltinRegistry } from "../extension/handlers";
import { convexFarmClient, type FarmClient } from "../extension/worker/farmClient";
import { Worker } from "../extension/worker/worker";
import { saveFigures, type Figure } from "./results";

type Seeded = { url: string; clientKey: string; workerKeys: string[] };

const figures: Record<string, Figure> = {};
let server: ChildProcess;
let seeded: Seeded;
let runnerPath: string;
const clients: ConvexClient[] = [];
const pools: Array<{ close(): void }> = [];

function client(): ConvexClient {
  const c = new ConvexClient(seeded.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  clients.push(c);
  return c;
}

/** Wraps a FarmClient and counts every call and every subscription callback. */
function counting(inner: FarmClient) {
  const counts = { calls: 0 };
  const wrap = <T extends (...a: any[]) => any>(f: T): T => ((...a: any[]) => (counts.calls++, f(...a))) as T;
  const farm: FarmClient = {
    watch: wrap(inner.watch.bind(inner)),
    mine: wrap(inner.mine.bind(inner)),
    claim: wrap(inner.claim.bind(inner)),
    heartbeat: wrap(inner.heartbeat.bind(inner)),
    output: wrap(inner.output.bind(inner)),
    complete: wrap(inner.complete.bind(inner)),
    fail: wrap(inner.fail.bind(inner)),
    release: wrap(inner.release.bind(inner)),
    onConnectionChange: inner.onConnectionChange?.bind(inner),
  };
  return { farm, counts };
}

function engine(keyIndex: number, concurrency = 1) {
  const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { runnerPath, maxIdle: concurrency } });
  pools.push(pool);
  const wrapped = counting(convexFarmClient(client(), seeded.workerKeys[keyIndex]));
  return { worker: new Worker({ client: wrapped.farm, handlers: registry, concurrency }), counts: wrapped.counts };
}

async function submitMany(c: ConvexClient, jobs: Array<{ type: string; payload: unknown }>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < jobs.length; i += 200) {
    ids.push(...(await c.mutation(anyApi.jobs.submitBatch, { clientKey: seeded.clientKey, jobs: jobs.slice(i, i + 200) })));
  }
  return ids;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const RESOLUTION_MS = 10;

/** p99 lateness of this process's event loop over a quiet stretch (the histogram records tick intervals). */
async function idleDelayP99(ms: number): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  await new Promise((r) => setTimeout(r, ms));
  h.disable();
  return h.percentile(99) / 1e6 - RESOLUTION_MS;
}
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

describe("engine bench", () => {
  beforeAll(async () => {
    // The production runner is a bundle; build it once so forks do not pay for a TypeScript loader.
    const out = mkdtempSync(join(tmpdir(), "farmhand-bench-"));
    runnerPath = join(out, "handlerRunner.js");
    await esbuild.build({ entryPoints: ["extension/handlers/runner.ts"], outfile: runnerPath, bundle: true, platform: "node", format: "cjs", logLevel: "silent" });

    server = spawn(process.execPath, ["--import", "tsx", "test/server/cli.ts", "--port", "0", "--seed", "5"], { stdio: ["ignore", "pipe", "inherit"] });
    seeded = await new Promise<Seeded>((resolve, reject) => {
      let text = "";
      server.stdout!.setEncoding("utf8").on("data", (d: string) => {
        text += d;
        if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]));
      });
      server.on("exit", (code) => reject(new Error(`test server exited with ${code}`)));
    });
  });

  afterAll(async () => {
    for (const p of pools) p.close();
    await Promise.all(clients.map((c) => c.close()));
    server?.kill("SIGTERM");
    saveFigures("engine", figures);
  });

  it("pickup latency: submit → claimed, idle worker", async () => {
    const { worker } = engine(4);
    const started = new Map<string, number>();
    const finished = new Map<string, () => void>();
    worker.on("jobStarted", (e) => started.set(e.jobId, performance.now()));
    worker.on("jobFinished", (e) => finished.get(e.jobId)?.());
    await worker.start();
    const submitter = client();
    const samples: number[] = [];
    for (let i = 0; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const t0 = performance.now();
      const id: string = await submitter.mutation(anyApi.jobs.submit, { clientKey: seeded.clientKey, type: "demo.echo", payload: { i } });
      await new Promise<void>((resolve) => (started.has(id) && !finished.has(id) ? resolve() : finished.set(id, resolve)));
      if (i >= 5) samples.push(started.get(id)! - t0); // the first few warm up the child process and the client
    }
    await worker.stop();
    samples.sort((a, b) => a - b);
    figures.pickup_latency_p50 = { value: round(percentile(samples, 50)), unit: "ms" };
    figures.pickup_latency_p95 = { value: round(percentile(samples, 95)), unit: "ms" };
  });

  it("throughput with 4 workers on demo.echo, and host CPU per job", async () => {
    const engines = [0, 1, 2, 3].map((i) => engine(i));
    const warm = await submitMany(client(), engines.map(() => ({ type: "demo.echo", payload: { warm: true } })));
    let done = 0;
    let allDone: () => void = () => undefined;
    const total = 400;
    for (const { worker } of engines) {
      worker.on("jobFinished", () => {
        done++;
        if (done === warm.length + total) allDone();
      });
    }
    await Promise.all(engines.map(({ worker }) => worker.start()));
    while (done < warm.length) await new Promise((r) => setTimeout(r, 20));
    // Queue first, then measure only the processing.
    const finishedAll = new Promise<void>((resolve) => (allDone = resolve));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await submitMany(client(), Array.from({ length: total }, (_, i) => ({ type: "demo.echo", payload: { i } })));
    await finishedAll;
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await Promise.all(engines.map(({ worker }) => worker.stop()));
    const cpuMsPerJob = (cpu.user + cpu.system) / 1000 / total;
    figures.throughput_4_workers_echo = { value: round(total / seconds, 1), unit: "jobs/s" };
    figures.host_cpu_per_job = { value: round(cpuMsPerJob, 3), unit: "ms", target: "< 2 ms", pass: cpuMsPerJob < 2 };
  });

  it("event-loop delay of the host while 2 demo.primes jobs saturate the CPU", async () => {
    const { worker } = engine(4, 1);
    worker.setConcurrency(1);
    // Seeded workers may hold one job at a time; run two engines (two keys) so two primes jobs run at once.
    const second = engine(3, 1);
    let finished = 0;
    let allDone: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (allDone = resolve));
    const outcomes: string[] = [];
    for (const w of [worker, second.worker]) {
      w.on("jobFinished", (e) => {
        outcomes.push(`${e.type}:${e.outcome}`);
        if (++finished === 2) allDone();
      });
    }
    await Promise.all([worker.start(), second.worker.start()]);
    // Warm both child processes first: forking is a one-off cost, not what a long job feels like.
    await submitMany(client(), [
      { type: "demo.primes", payload: { n: 10 } },
      { type: "demo.primes", payload: { n: 10 } },
    ]);
    await both;
    finished = 0;
    // What the machine itself (other processes) adds, measured right before and right after the jobs.
    const before = await idleDelayP99(3_000);
    const busy = new Promise<void>((resolve) => (allDone = resolve));
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    await submitMany(client(), [
      { type: "demo.primes", payload: { n: 1_000_000_000 } },
      { type: "demo.primes", payload: { n: 1_000_000_000 } },
    ]);
    const busyStart = performance.now();
    await busy;
    histogram.disable();
    const busySeconds = (performance.now() - busyStart) / 1000;
    if (outcomes.join() !== Array(4).fill("demo.primes:succeeded").join()) throw new Error(`primes jobs did not all succeed: ${outcomes}`);
    await Promise.all([worker.stop(), second.worker.stop()]);
    const after = await idleDelayP99(3_000);
    const p99 = histogram.percentile(99) / 1e6 - RESOLUTION_MS;
    const baseline = (before + after) / 2;
    figures.primes_jobs_wall_time = { value: round(busySeconds), unit: "s" };
    figures.event_loop_delay_p99_2_primes = { value: round(p99), unit: "ms", target: "< 20 ms", pass: p99 < 20 };
    figures.event_loop_delay_max_2_primes = { value: round(histogram.max / 1e6 - RESOLUTION_MS), unit: "ms" };
    figures.event_loop_delay_p99_baseline_idle = { value: round(baseline), unit: "ms" };
    // On a shared machine the absolute figure includes other processes' load; this isolates the jobs' share.
    const added = Math.max(0, p99 - baseline);
    figures.event_loop_delay_p99_added_by_jobs = { value: round(added), unit: "ms", target: "< 20 ms", pass: added < 20 };
  });

  it("idle: function calls with nothing queued", async () => {
    const { worker, counts } = engine(2);
    await worker.start();
    await new Promise((r) => setTimeout(r, 1_000));
    const before = counts.calls; // the watch subscription itself
    const windowMs = 20_000;
    await new Promise((r) => setTimeout(r, windowMs));
    const perMinute = ((counts.calls - before) * 60_000) / windowMs;
    await worker.stop();
    figures.idle_calls_per_minute = { value: perMinute, unit: "calls/min", target: "0", pass: perMinute === 0 };
  });
});
