// Engine benchmarks: pickup latency, throughput, host CPU per job, event-loop delay under CPU-bound jobs,
// and idle calls. The loopback server runs in its own process so the host process measures only the engine.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ConvexClient } from "convex/browser";
import { api } from "../convex/_generated/api";
import * as esbuild from "esbuild";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createBuiltinRegistry } from "../extension/handlers";
import { PRIMES_MAX_N } from "../extension/handlers/impl/primes";
import { convexFarmClient, decorate, type FarmClient } from "../extension/worker/farmClient";
import { Worker } from "../extension/worker/worker";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/engine.bench.ts", "convex", "extension/worker", "extension/handlers", "test/server"];

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
  const farm: FarmClient = {
    ...decorate(inner, { args: (_name, args) => (counts.calls++, args) }),
    doorbell: (onValue, onError) => (counts.calls++, inner.doorbell(onValue, onError)),
  };
  return { farm, counts };
}

function engine(keyIndex: number, concurrency = 1) {
  const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { runnerPath, maxIdle: concurrency } });
  pools.push(pool);
  const wrapped = counting(convexFarmClient(client(), seeded.workerKeys[keyIndex]));
  return { worker: new Worker({ client: wrapped.farm, handlers: registry, concurrency }), counts: wrapped.counts, pool };
}

async function submitMany(c: ConvexClient, jobs: Array<{ type: string; payload: unknown }>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < jobs.length; i += 200) {
    ids.push(...(await c.mutation(api.jobs.submitBatch, { clientKey: seeded.clientKey, jobs: jobs.slice(i, i + 200) })));
  }
  return ids;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// monitorEventLoopDelay records the time between its timer ticks: the loop's lateness is that minus the resolution.
const RESOLUTION_MS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How late each tick of a RESOLUTION_MS timer fires, sampled for `ms`. */
function lateness(ms: number): Promise<number[]> {
  return new Promise((resolve) => {
    const samples: number[] = [];
    const end = performance.now() + ms;
    let expected = performance.now() + RESOLUTION_MS;
    const tick = () => {
      const now = performance.now();
      samples.push(Math.max(0, now - expected));
      if (now >= end) return resolve(samples);
      expected = now + RESOLUTION_MS;
      setTimeout(tick, RESOLUTION_MS);
    };
    setTimeout(tick, RESOLUTION_MS);
  });
}
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

describe("engine bench", () => {
  beforeAll(async () => {
    // The production runner is a bundle; build it once so forks do not pay for a TypeScript loader.
    const out = mkdtempSync(join(tmpdir(), "farmhand-bench-"));
    runnerPath = join(out, "handlerRunner.js");
    await esbuild.build({ entryPoints: ["extension/handlers/runner.ts"], outfile: runnerPath, bundle: true, platform: "node", format: "cjs", logLevel: "silent" });

    server = spawn(process.execPath, ["--import", "tsx", "test/server/cli.ts", "--port", "0", "--seed", "5"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    seeded = await new Promise<Seeded>((resolve, reject) => {
      let text = "";
      server.stdout!.setEncoding("utf8").on("data", (d: string) => {
        text += d;
        if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]) as Seeded);
      });
      server.on("exit", (code) => reject(new Error(`test server exited with ${code}`)));
    });
  });

  afterAll(async () => {
    for (const p of pools) p.close();
    await Promise.all(clients.map((c) => c.close()));
    server?.kill("SIGTERM");
    saveFigures("engine", figures, MEASURES);
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
      const id: string = await submitter.mutation(api.jobs.submit, { clientKey: seeded.clientKey, type: "demo.echo", payload: { i } });
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
    // Seeded workers may hold one job at a time; two engines (two keys) run two primes jobs at once.
    const engines = [engine(4), engine(3)];
    const running = new Set<string>();
    let finished = 0;
    for (const { worker } of engines) {
      worker.on("jobProgress", (e) => running.add(e.jobId));
      worker.on("jobFinished", () => finished++);
    }
    await Promise.all(engines.map(({ worker }) => worker.start()));
    // Warm both child processes first: forking is a one-off cost, not what a long job feels like.
    await submitMany(client(), [
      { type: "demo.primes", payload: { n: 10 } },
      { type: "demo.primes", payload: { n: 10 } },
    ]);
    while (finished < 2) await sleep(20);
    running.clear();
    // More jobs than slots, so both slots stay busy (warm children are reused) for the whole measurement.
    const busyJobs = await submitMany(client(), Array.from({ length: 12 }, () => ({ type: "demo.primes", payload: { n: PRIMES_MAX_N } })));
    while (running.size < 2) await sleep(20);

    // The figure the target is about: the host's event-loop delay while both jobs run flat out.
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    await sleep(8_000);
    histogram.disable();

    // The machine is shared and its load drifts, so also alternate short windows with the jobs' processes
    // running and stopped (SIGSTOP): the stopped windows measure what everything else costs at that moment.
    const children = engines.flatMap(({ pool }) => pool.pids);
    if (children.length !== 2) throw new Error(`expected 2 handler processes, found ${children.length}`);
    const signal = (sig: NodeJS.Signals) => children.forEach((pid) => process.kill(pid, sig));
    const loaded: number[] = [];
    const stopped: number[] = [];
    for (let i = 0; i < 10; i++) {
      loaded.push(...(await lateness(600)));
      signal("SIGSTOP");
      await sleep(50);
      stopped.push(...(await lateness(600)));
      signal("SIGCONT");
      await sleep(50);
    }
    const stillRunning = engines.every(({ worker }) => worker.snapshot().running.length === 1);
    await Promise.all(engines.map(({ worker }) => worker.stop()));
    // Leave nothing queued for the benchmarks that follow.
    const canceler = client();
    for (const jobId of busyJobs) await canceler.mutation(api.jobs.cancel, { clientKey: seeded.clientKey, jobId });
    if (!stillRunning) throw new Error("the jobs ran out before the measurement did; submit more");

    const p99 = histogram.percentile(99) / 1e6 - RESOLUTION_MS;
    figures.event_loop_delay_p99_2_primes = { value: round(p99), unit: "ms", target: "< 20 ms", pass: p99 < 20 };
    figures.event_loop_delay_max_2_primes = { value: round(histogram.max / 1e6 - RESOLUTION_MS), unit: "ms" };
    const withJobs = percentile(loaded.sort((a, b) => a - b), 99);
    const withoutJobs = percentile(stopped.sort((a, b) => a - b), 99);
    figures.event_loop_delay_p99_interleaved_jobs_running = { value: round(withJobs), unit: "ms" };
    figures.event_loop_delay_p99_interleaved_jobs_stopped = { value: round(withoutJobs), unit: "ms" };
    // On a loaded shared machine the absolute figure includes other processes; this is the jobs' own share.
    const added = Math.max(0, withJobs - withoutJobs);
    figures.event_loop_delay_p99_added_by_jobs = { value: round(added), unit: "ms", target: "< 20 ms", pass: added < 20 };
  });

  it("idle: function calls with nothing queued", async () => {
    const { worker, counts } = engine(2);
    await worker.start();
    await new Promise((r) => setTimeout(r, 1_000));
    const before = counts.calls; // the doorbell subscription and the first claim
    const windowMs = 20_000;
    await new Promise((r) => setTimeout(r, windowMs));
    const perMinute = ((counts.calls - before) * 60_000) / windowMs;
    await worker.stop();
    figures.idle_calls_per_minute = { value: perMinute, unit: "calls/min", target: "0", pass: perMinute === 0 };
  });
});
