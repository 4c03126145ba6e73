// Suspension (issue 13): what a frozen job costs the donor, and how fast the engine steps aside and back.
// Real demo.primes jobs in the engine's child processes (their own process groups), driven through the engine's
// pause-for-the-owner / resume; the processes' states and CPU times are read from /proc (Linux only).
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createBuiltinRegistry } from "../extension/handlers";
import { PRIMES_MAX_N } from "../extension/handlers/impl/primes";
import { Worker } from "../extension/worker/worker";
import { ScriptedFarm } from "../test/unit/worker/scriptedFarm";
import { saveFigures } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/suspend.bench.ts", "extension/worker", "extension/handlers"];

const JOBS = 2;
const CYCLES = 20;
const FROZEN_WINDOW_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** State letter and CPU time (ms) of a process, from /proc/<pid>/stat. */
function stat(pid: number): { state: string; cpuMs: number } {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0], cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/** Milliseconds until every pid satisfies `ok`, polling /proc about every half millisecond. */
async function timeUntil(pids: number[], ok: (state: string) => boolean, from: number): Promise<number> {
  for (;;) {
    if (pids.every((pid) => ok(stat(pid).state))) return performance.now() - from;
    if (performance.now() - from > 10_000) throw new Error("processes did not change state within 10 s");
    await new Promise((r) => setTimeout(r, 0.5));
  }
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

describe.runIf(process.platform === "linux")("suspension", () => {
  const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { maxIdle: JOBS } });
  afterAll(() => pool.close());

  it(`freezes ${JOBS} demo.primes jobs at once and thaws them at once; a frozen job uses no CPU`, async () => {
    const farm = new ScriptedFarm();
    const worker = new Worker({ client: farm, handlers: registry, concurrency: JOBS, suspendLimitMs: 60 * 60_000, onlyCapabilities: ["demo.primes"] });
    for (let i = 0; i < JOBS; i++) farm.offer("demo.primes", { n: PRIMES_MAX_N }, 60_000);
    await worker.start();
    for (let i = 0; i < 1_200 && !(worker.snapshot().running.length === JOBS && worker.snapshot().running.every((r) => (r.progress ?? 0) > 0)); i++) await sleep(50);
    const pids = pool.pids;
    expect(pids).toHaveLength(JOBS);

    const pauseMs: number[] = [];
    const resumeMs: number[] = [];
    for (let i = 0; i < CYCLES; i++) {
      let from = performance.now();
      worker.pause("you are using the computer", { suspend: true });
      pauseMs.push(await timeUntil(pids, (s) => s === "T", from));
      await sleep(20);
      from = performance.now();
      worker.resume();
      resumeMs.push(await timeUntil(pids, (s) => s !== "T", from));
      await sleep(20);
    }

    worker.pause("you are using the computer", { suspend: true });
    await timeUntil(pids, (s) => s === "T", performance.now());
    const before = pids.map((pid) => stat(pid).cpuMs);
    await sleep(FROZEN_WINDOW_MS);
    const usedMs = Math.max(...pids.map((pid, i) => stat(pid).cpuMs - before[i]));
    const frozenCorePercent = (usedMs / FROZEN_WINDOW_MS) * 100;
    expect(worker.snapshot().running.every((r) => r.suspendedSince !== undefined)).toBe(true);
    // and a thaw lets them go on: more CPU once running again
    worker.resume();
    await sleep(500);
    const ranAgain = pids.some((pid, i) => stat(pid).cpuMs > before[i] + usedMs);
    await worker.stop();

    saveFigures("suspend", {
      frozen_job_cpu_over_5s: { value: round(frozenCorePercent, 2), unit: "% of one core", target: "< 1", pass: frozenCorePercent < 1 },
      pause_to_all_stopped_p95: { value: round(p95(pauseMs)), unit: `ms (${JOBS} jobs, ${CYCLES} pauses)`, target: "< 200", pass: p95(pauseMs) < 200 },
      resume_to_running_p95: { value: round(p95(resumeMs)), unit: `ms (${JOBS} jobs, ${CYCLES} resumes)`, target: "< 200", pass: p95(resumeMs) < 200 },
      thawed_jobs_run_again: { value: ranAgain ? 1 : 0, unit: "yes = 1", target: "1", pass: ranAgain },
    }, MEASURES);
  });
});
