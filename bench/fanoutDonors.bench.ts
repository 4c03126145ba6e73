// The fan-out benchmark's largest farms (bench/fanout.bench.ts runs engines up to 1,000): 10 and 10,000 idle donors
// emulated at the protocol level in one process (bench/fanout/protocolDonors.ts: each declares one free slot and
// holds its doorbell subscription, as an engine does), jobs one at a time. What a job costs — every execution,
// scheduled ones and subscription re-runs included, and every push — must not grow with the donors who wait.
// The lane's first job also has the new lane learn the donors already waiting (dispatch:backfill, a page of
// LIMITS.laneBackfill waiters per transaction): a one-time cost per lane, waited out before the steady window and
// reported as figures of its own (pages, executions).
import { expect, it } from "vitest";
import { api } from "../convex/_generated/api";
import { newClient } from "./fanout/engines";
import { ProtocolDonors } from "./fanout/protocolDonors";
import { LIMITS } from "../convex/core/limits";
import { ServerProcess, totals, type Stats } from "./fanout/serverProcess";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/fanoutDonors.bench.ts", "bench/fanout", "convex", "test/server"];

const SIZES = [10, 10_000];
const JOBS = 6;
/** The backfill is over when none of its pages ran for this long (each page schedules the next at once). */
const BACKFILL_QUIET_MS = 3_000;
const BACKFILL_TIMEOUT_MS = 600_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const backfillCalls = (stats: Stats) => stats.functions["dispatch:backfill"]?.calls ?? 0;

/**
 * Wait until the new lane's backfill has ended: no dispatch:backfill page for BACKFILL_QUIET_MS (stats since the
 * last reset, read without resetting).
 */
async function backfillEnded(server: ServerProcess, n: number): Promise<Stats> {
  const deadline = Date.now() + BACKFILL_TIMEOUT_MS;
  let stats = await server.stats();
  let quietSince = Date.now();
  for (;;) {
    await sleep(250);
    const now = await server.stats();
    if (backfillCalls(now) !== backfillCalls(stats)) quietSince = Date.now();
    stats = now;
    if (Date.now() - quietSince >= BACKFILL_QUIET_MS) return stats;
    if (Date.now() > deadline) throw new Error(`backfill with ${n} donors: still paging after ${BACKFILL_TIMEOUT_MS} ms`);
  }
}

type Backfill = { pages: number; executions: number; byFunction: Record<string, number> };
type Measured = { calls: number; pushes: number; byFunction: Record<string, number>; backfill: Backfill };

/**
 * N waiting donors; jobs one at a time, each counted from its submit to a second after it ended. The first job makes
 * the lane: its window runs on until the lane's backfill has ended, and is the backfill's figure (that job included),
 * not a steady one.
 */
async function farm(n: number): Promise<Measured> {
  const server = await ServerProcess.start(["--seed", String(n)]);
  const { clientKey, workerKeys } = server.seeded as Required<typeof server.seeded>;
  const donors = new ProtocolDonors(server.url, workerKeys);
  const submitter = newClient(server.url);
  try {
    await donors.start();
    await sleep(3_000);
    let calls = 0;
    let pushes = 0;
    const byFunction: Record<string, number> = {};
    let backfill: Backfill | undefined;
    for (let j = 0; j <= JOBS; j++) {
      await server.resetStats();
      const jobId: string = await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: { j } });
      await until(() => donors.finished.has(jobId), 60_000, `job ${j} with ${n} donors`);
      await sleep(1_000);
      if (j === 0) {
        const stats = await backfillEnded(server, n);
        const all = totals(stats, (name) => name === "jobs:submit");
        // the submit that made the lane did its first page; each dispatch:backfill execution one more
        backfill = { pages: 1 + backfillCalls(stats), executions: all.calls, byFunction: Object.fromEntries(Object.entries(stats.functions).map(([name, f]) => [name, f.calls])) };
        console.log(`fanout_donors · N=${n}, the lane's first job and backfill: ${backfill.pages} pages, executions by function:`, JSON.stringify(backfill.byFunction));
        continue;
      }
      const stats = await server.stats();
      const job = totals(stats, (name) => name === "jobs:submit");
      calls += job.calls;
      pushes += job.pushes;
      for (const [name, f] of Object.entries(stats.functions)) if (name !== "jobs:submit") byFunction[name] = (byFunction[name] ?? 0) + f.calls;
    }
    console.log(`fanout_donors · N=${n}, executions by function over ${JOBS} jobs:`, JSON.stringify(byFunction));
    return { calls: calls / JOBS, pushes: pushes / JOBS, byFunction, backfill: backfill! };
  } finally {
    await donors.close();
    await submitter.close();
    server.close();
  }
}

it("idle donors at the protocol level: executions and pushes per job flat from 10 to 10,000", { timeout: 1_800_000 }, async () => {
  const figures: Record<string, Figure> = {};
  const measured: Record<number, Measured> = {};
  for (const n of SIZES) {
    measured[n] = await farm(n);
    // once per lane: a page per LIMITS.laneBackfill waiting donors (one more when the last page is full), and per
    // page its own execution and at most two it sets off (a dispatcher round, a summary), beside the first job's
    const { pages, executions } = measured[n].backfill;
    const maxPages = Math.ceil(n / LIMITS.laneBackfill) + 1;
    figures[`protocol_donors_N${n}_backfill_pages`] = { value: pages, unit: `pages of ${LIMITS.laneBackfill} (once per lane)`, target: `≤ ${maxPages}`, pass: pages <= maxPages };
    const maxExecutions = 3 * pages + 15;
    figures[`protocol_donors_N${n}_backfill_executions`] = {
      value: executions,
      unit: "executions (first job + backfill, once per lane)",
      target: `≤ 3 × pages + 15 = ${maxExecutions}`,
      pass: executions <= maxExecutions,
    };
    figures[`protocol_donors_N${n}_executions_per_job`] = { value: round(measured[n].calls), unit: "executions/job", target: "≤ 15", pass: measured[n].calls <= 15 };
    figures[`protocol_donors_N${n}_pushes_per_job`] = { value: round(measured[n].pushes), unit: "pushes/job", target: "≤ 6", pass: measured[n].pushes <= 6 };
  }
  const [small, large] = SIZES.map((n) => measured[n]);
  figures.protocol_donors_executions_spread = { value: round(Math.abs(large.calls - small.calls)), unit: `executions/job (N=${SIZES[1]} − N=${SIZES[0]})`, target: "flat: ≤ 2", pass: Math.abs(large.calls - small.calls) <= 2 };
  figures.protocol_donors_pushes_spread = { value: round(Math.abs(large.pushes - small.pushes)), unit: `pushes/job (N=${SIZES[1]} − N=${SIZES[0]})`, target: "flat: ≤ 1", pass: Math.abs(large.pushes - small.pushes) <= 1 };
  saveFigures("fanout_donors", figures, MEASURES);
  expect(large.calls).toBeGreaterThan(0);
});
