// Farm app benchmarks: how soon a cached app starts, the same computation as an app and as the built-in
// demo.primes handler, and the host's event loop while apps saturate the CPU. The handler runner and the app
// thread are bundled with esbuild, as they ship, so tsx start-up costs are not measured.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import * as esbuild from "esbuild";
import { afterAll, beforeAll, describe, it } from "vitest";
import type { AppPin } from "../extension/handlers/apps/appPin";
import { AppRunner } from "../extension/handlers/apps/appRunner";
import { ModuleCache } from "../extension/handlers/apps/moduleCache";
import { ProcessPool, type PoolRunContext } from "../extension/handlers/processPool";
import { echoStdin } from "../test/unit/apps/hostileApps";
import { lateness } from "./eventLoopLateness";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/apps.bench.ts", "bench/eventLoopLateness.ts", "extension/handlers"];

const figures: Record<string, Figure> = {};
let dir: string;
let runnerPath: string;
let built: Record<string, string>;
const pools: ProcessPool[] = [];

function ctx(onProgress?: () => void): PoolRunContext {
  return {
    jobId: "bench",
    attempt: 1,
    signal: new AbortController().signal,
    progress: () => onProgress?.(),
    output: () => undefined,
  };
}

// Start-up and speed are measured with the runner processes at normal priority: at the shipped niceness (19) a
// benchmark on a busy, shared machine measures how long the scheduler starves them, not the sandbox. The
// event-loop figure uses the shipped niceness, which is what keeps the host responsive.
function setup(concurrency = 1, niceness = 0) {
  const pool = new ProcessPool({ runnerPath, maxIdle: concurrency, niceness });
  pools.push(pool);
  const published = new Map<string, Uint8Array>();
  let fetched = 0;
  const runner = new AppRunner(pool, new ModuleCache({ dir: join(dir, "modules") }), (app) => (fetched++, Promise.resolve(published.get(app.sha256)!)));
  const publish = (name: string, bytes: Uint8Array): AppPin => {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    published.set(sha256, bytes);
    return { name, version: 1, sha256, memoryMB: 256, timeoutMs: 600_000 };
  };
  return { pool, runner, publish, fetches: () => fetched };
}

/** Running/stopped window pairs while the apps run (at least MIN_WINDOWS, or the jobs were too short). */
const WINDOWS = 10;
const MIN_WINDOWS = 5;
const LATENESS_TICK_MS = 5;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

describe("apps", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "farmhand-apps-bench-"));
    await esbuild.build({
      entryPoints: { handlerRunner: "extension/handlers/runner.ts", appThread: "extension/handlers/apps/thread.ts" },
      outdir: dir,
      bundle: true,
      platform: "node",
      format: "cjs",
      logLevel: "silent",
    });
    runnerPath = join(dir, "handlerRunner.js");
    const { buildApps } = await import("../examples/apps/build.mjs");
    built = buildApps({ log: () => undefined });
  }, 300_000);

  afterAll(() => {
    for (const p of pools) p.close();
    rmSync(dir, { recursive: true, force: true });
    saveFigures("apps", figures, MEASURES);
  });

  it("start of a cached app job: run request → module running, and the module fetched once", async () => {
    const { runner, publish, fetches } = setup();
    const app = publish("echo", echoStdin());
    const samples: number[] = [];
    let fetchedBefore = 0;
    for (let i = 0; i < 45; i++) {
      const started = performance.now();
      let running = 0;
      await runner.run({ app, payload: { i } }, ctx(() => (running ||= performance.now())));
      // The first runs start the runner process, compile the module and fill the cache: not "cached".
      if (i >= 5) samples.push(running - started);
      if (i === 4) fetchedBefore = fetches();
      // A job does not usually arrive the instant the last one ended; let the spare thread boot.
      await new Promise((r) => setTimeout(r, 50));
    }
    const cachedFetches = fetches() - fetchedBefore;
    figures["cached app start p50 (runner at nice 0)"] = { value: round(percentile(samples, 50)), unit: "ms (a timing: moves with the machine)" };
    figures["cached app start p95 (runner at nice 0)"] = { value: round(percentile(samples, 95)), unit: "ms" };
    figures["module fetches by the 40 cached starts"] = { value: cachedFetches, unit: "fetches (the first run fetched it)", target: "0", pass: cachedFetches === 0 && fetchedBefore === 1 };
  });

  it("the same computation as an app and as demo.primes", async () => {
    const { pool, runner, publish } = setup();
    const app = publish("primes", readFileSync(built.primes));
    const n = 200_000_000;
    const appMs: number[] = [];
    const builtinMs: number[] = [];
    let appCpu = 0;
    let builtinCpu = 0;
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      const out = await runner.run({ app, payload: { n } }, ctx());
      appMs.push(performance.now() - t);
      appCpu = out.cpuMs ?? NaN;
      t = performance.now();
      const builtin = await pool.run({ builtin: "demo.primes" }, { n }, { ...ctx(), onCpuMs: (ms) => void (builtinCpu = ms) });
      builtinMs.push(performance.now() - t);
      if (JSON.stringify(out.result) !== JSON.stringify(builtin)) throw new Error(`the app counted ${JSON.stringify(out.result)}, demo.primes ${JSON.stringify(builtin)}`);
    }
    const app50 = percentile(appMs, 50);
    const builtin50 = percentile(builtinMs, 50);
    figures["primes below 2e8 as an app (wall)"] = { value: Math.round(app50), unit: "ms" };
    figures["primes below 2e8 as demo.primes (wall)"] = { value: Math.round(builtin50), unit: "ms" };
    figures["app / demo.primes wall time"] = { value: round(app50 / builtin50, 2), unit: "ratio" };
    figures["primes app cpuMs (last run)"] = { value: appCpu, unit: "ms" };
    figures["demo.primes cpuMs (last run)"] = { value: builtinCpu, unit: "ms" };
  });

  it("host event loop while 2 apps saturate the CPU, against the same host with the apps' runners stopped", async () => {
    const { pool, runner, publish } = setup(2, 19);
    const app = publish("mandelbrot", readFileSync(built.mandelbrot));
    // Warm both runner processes first, so their start-up is not measured.
    await Promise.all([0, 1].map(() => runner.run({ app, payload: { width: 8, height: 8 } }, ctx())));
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    histogram.enable();
    // Two jobs that keep both runners busy for longer than the windows below take (320×200 is the most the result
    // cap allows; the points are inside the set, so each costs maxIter), stopped once the windows are done.
    const payload = { x: -0.745, y: 0.1, span: 0.02, width: 320, height: 200, maxIter: 100_000 }; // the app takes at most 100,000
    const stop = new AbortController();
    let ended = false;
    const jobs = Promise.allSettled([0, 1].map(() => runner.run({ app, payload }, { ...ctx(), signal: stop.signal }))).finally(() => (ended = true));
    while (pool.pids.length < 2) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200)); // both jobs under way
    // The machine is shared and its load drifts: alternate windows with the runners going and stopped (SIGSTOP);
    // the stopped windows measure what everything else costs the host's event loop at that moment.
    const signal = (sig: NodeJS.Signals) => pool.pids.forEach((pid) => process.kill(pid, sig));
    const loaded: number[] = [];
    const stopped: number[] = [];
    let windows = 0;
    for (; windows < WINDOWS && !ended; windows++) {
      loaded.push(...(await lateness(600, LATENESS_TICK_MS)));
      signal("SIGSTOP");
      await new Promise((r) => setTimeout(r, 50));
      stopped.push(...(await lateness(600, LATENESS_TICK_MS)));
      signal("SIGCONT");
      await new Promise((r) => setTimeout(r, 50));
    }
    const endedEarly = ended;
    stop.abort(new Error("the measurement is over"));
    await jobs;
    histogram.disable();
    if (endedEarly && windows < MIN_WINDOWS) throw new Error(`the apps ended after ${windows} windows; give them more work`);
    const p99 = histogram.percentile(99) / 1e6;
    const withApps = percentile(loaded, 99);
    const withoutApps = percentile(stopped, 99);
    const added = Math.max(0, withApps - withoutApps);
    figures["host event-loop p99 while 2 apps run"] = { value: round(p99), unit: "ms (a timing: moves with the machine)" };
    figures["host event-loop p99, apps running (interleaved)"] = { value: round(withApps), unit: "ms" };
    figures["host event-loop p99, apps stopped (interleaved)"] = { value: round(withoutApps), unit: "ms" };
    figures["host event-loop p99 added by 2 apps"] = { value: round(added), unit: "ms (running − stopped, the same host at the same time)", target: "< 20 ms", pass: added < 20 };
  });
});
