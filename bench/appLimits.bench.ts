// An app's limit against an app asleep in a host call: how soon the donor gets the app's memory back. The app
// grows its memory to 64 MiB (every page written), then sleeps an hour in poll_oneoff. Shipped: the runner that
// held its thread is killed with its process group at the limit (runApp's discardRunner). Compared with what
// Worker.terminate() alone does to a thread in the same sleep (here a 3 s one): it waits for the sleep to end.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import * as esbuild from "esbuild";
import { afterAll, beforeAll, describe, it } from "vitest";
import type { AppPin } from "../extension/handlers/apps/appPin";
import { AppRunner } from "../extension/handlers/apps/appRunner";
import { ModuleCache } from "../extension/handlers/apps/moduleCache";
import { ProcessPool, type PoolRunContext } from "../extension/handlers/processPool";
import { prints } from "../test/unit/apps/hostileApps";
import { buildModule, FD_WRITE, op, POLL_ONEOFF } from "../test/unit/apps/wasmBuilder";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/appLimits.bench.ts", "extension/handlers"];

const figures: Record<string, Figure> = {};
const MEMORY_PAGES = 1024; // 64 MiB
let dir: string;
let runnerPath: string;

/** Grows to MEMORY_PAGES pages writing each, prints a progress line, then sleeps `seconds` in poll_oneoff. */
function hungrySleeper(seconds: number): Uint8Array {
  const progress = '{"progress": 0.5, "status": "asleep"}\n';
  const sub = 256;
  return buildModule({
    imports: [FD_WRITE, POLL_ONEOFF],
    memory: { min: 1 },
    data: [{ offset: 1024, bytes: progress }],
    locals: 1,
    start: [
      ...op.loop,
      ...op.i32(1), ...op.memoryGrow, ...op.localTee(0), ...op.i32(MEMORY_PAGES - 1), ...op.i32Eq, ...op.i32Eqz,
      ...op.if,
      ...Array.from({ length: 16 }, (_, i) => [...op.localGet(0), ...op.i32(65536), ...op.i32Mul, ...op.i32(i * 4096), ...op.i32Add, ...op.i32(1), ...op.i32Store]).flat(),
      ...op.br(1),
      ...op.end,
      ...op.end,
      ...op.i32(16), ...op.i32(1024), ...op.i32Store, ...op.i32(20), ...op.i32(progress.length), ...op.i32Store,
      ...op.i32(1), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(0), ...op.drop,
      ...op.i32(sub + 16), ...op.i32(1), ...op.i32Store,
      ...op.i32(sub + 24), ...op.i64(BigInt(seconds) * 1_000_000_000n), ...op.i64Store,
      ...op.i32(sub), ...op.i32(512), ...op.i32(1), ...op.i32(600), ...op.call(1), ...op.drop,
    ],
  });
}

const rssMB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("app limits", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "farmhand-limits-bench-"));
    await esbuild.build({
      entryPoints: { handlerRunner: "extension/handlers/runner.ts", appThread: "extension/handlers/apps/thread.ts" },
      outdir: dir,
      bundle: true,
      platform: "node",
      format: "cjs",
      logLevel: "silent",
    });
    runnerPath = join(dir, "handlerRunner.js");
  }, 300_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    saveFigures("app_limits", figures, MEASURES);
  });

  it("blocked sleeper: time limit → runner's memory freed (process gone)", async () => {
    const pool = new ProcessPool({ runnerPath, maxIdle: 1, niceness: 0 });
    const published = new Map<string, Uint8Array>();
    const runner = new AppRunner(pool, new ModuleCache({ dir: join(dir, "modules") }), (app) => Promise.resolve(published.get(app.sha256)!));
    const publish = (bytes: Uint8Array, timeoutMs: number): AppPin => {
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      published.set(sha256, bytes);
      return { name: "sleeper", version: 1, sha256, memoryMB: 128, timeoutMs };
    };
    const freedMs: number[] = [];
    let heldMB = 0;
    try {
      for (let i = 0; i < 5; i++) {
        await runner.run({ app: publish(prints('{"warm": true}\n'), 10_000), payload: null }, ctx());
        const [pid] = pool.pids;
        let asleep = false;
        const limited = runner.run({ app: publish(hungrySleeper(3600), 2_000), payload: null }, ctx(() => (asleep = true))).then(
          () => Promise.reject(new Error("the sleeper returned: it was never limited")),
          () => performance.now(),
        );
        while (!asleep) await new Promise((r) => setTimeout(r, 5));
        heldMB = Math.max(heldMB, rssMB(pid));
        const limitAt = await limited;
        while (alive(pid)) await new Promise((r) => setTimeout(r, 1));
        freedMs.push(performance.now() - limitAt);
      }
    } finally {
      pool.close();
    }
    const worst = Math.max(...freedMs);
    figures["blocked sleeper: job failed at its limit → runner process gone, memory freed (worst of 5)"] = { value: Math.round(worst), unit: "ms", target: "< 1000 ms", pass: worst < 1000 };
    figures["blocked sleeper: runner RSS while asleep"] = { value: Math.round(heldMB), unit: "MB" };
  }, 120_000);

  it("for comparison: Worker.terminate() on a thread asleep in poll_oneoff for 3 s", async () => {
    const module = new WebAssembly.Module(hungrySleeper(3));
    const thread = new Worker(
      `const { parentPort } = require("node:worker_threads");
       const { WASI } = require("node:wasi");
       parentPort.once("message", (module) => {
         const wasi = new WASI({ version: "preview1", returnOnExit: true });
         const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: { ...wasi.wasiImport, fd_write: () => (parentPort.postMessage("asleep"), 0) } });
         wasi.start(instance);
       });`,
      { eval: true, execArgv: ["--no-warnings"] },
    );
    const asleep = new Promise((r) => thread.once("message", r));
    thread.postMessage(module);
    await asleep;
    await new Promise((r) => setTimeout(r, 100));
    const t = performance.now();
    await thread.terminate();
    figures["Worker.terminate() of a thread asleep 3 s (not shipped)"] = { value: Math.round(performance.now() - t), unit: "ms" };
  }, 60_000);
});

function ctx(onProgress?: () => void): PoolRunContext {
  return { jobId: "bench", attempt: 1, signal: new AbortController().signal, progress: () => onProgress?.(), output: () => undefined };
}
