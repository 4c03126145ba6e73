// The fan-out benchmark's largest farms (bench/fanout.bench.ts runs engines up to 1,000): 10 and 10,000 idle donors
// emulated at the protocol level in one process (bench/fanout/protocolDonors.ts: each declares one free slot and
// holds its doorbell subscription, as an engine does), jobs one at a time. What a job costs — every execution,
// scheduled ones and subscription re-runs included, and every push — must not grow with the donors who wait.
import { expect, it } from "vitest";
import { api } from "../convex/_generated/api";
import { newClient } from "./fanout/engines";
import { ProtocolDonors } from "./fanout/protocolDonors";
import { ServerProcess, totals } from "./fanout/serverProcess";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/fanoutDonors.bench.ts", "bench/fanout", "convex", "test/server"];

const SIZES = [10, 10_000];
const JOBS = 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** N waiting donors; jobs one at a time, each counted from its submit to a second after it ended (the first apart). */
async function farm(n: number): Promise<{ calls: number; pushes: number; byFunction: Record<string, number> }> {
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
    for (let j = 0; j <= JOBS; j++) {
      await server.resetStats();
      const jobId: string = await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: { j } });
      await until(() => donors.finished.has(jobId), 60_000, `job ${j} with ${n} donors`);
      await sleep(1_000);
      const stats = await server.stats();
      // the lane's first job also has it learn the waiting donors (dispatch:backfill): the steady cost is the rest
      if (j === 0) continue;
      const job = totals(stats, (name) => name === "jobs:submit");
      calls += job.calls;
      pushes += job.pushes;
      for (const [name, f] of Object.entries(stats.functions)) if (name !== "jobs:submit") byFunction[name] = (byFunction[name] ?? 0) + f.calls;
    }
    console.log(`fanout_donors · N=${n}, executions by function over ${JOBS} jobs:`, JSON.stringify(byFunction));
    return { calls: calls / JOBS, pushes: pushes / JOBS, byFunction };
  } finally {
    await donors.close();
    await submitter.close();
    server.close();
  }
}

it("idle donors at the protocol level: executions and pushes per job flat from 10 to 10,000", { timeout: 1_800_000 }, async () => {
  const figures: Record<string, Figure> = {};
  const measured: Record<number, { calls: number; pushes: number }> = {};
  for (const n of SIZES) {
    measured[n] = await farm(n);
    figures[`protocol_donors_N${n}_executions_per_job`] = { value: round(measured[n].calls), unit: "executions/job", target: "≤ 15", pass: measured[n].calls <= 15 };
    figures[`protocol_donors_N${n}_pushes_per_job`] = { value: round(measured[n].pushes), unit: "pushes/job", target: "≤ 6", pass: measured[n].pushes <= 6 };
  }
  const [small, large] = SIZES.map((n) => measured[n]);
  figures.protocol_donors_executions_spread = { value: round(Math.abs(large.calls - small.calls)), unit: `executions/job (N=${SIZES[1]} − N=${SIZES[0]})`, target: "flat: ≤ 2", pass: Math.abs(large.calls - small.calls) <= 2 };
  figures.protocol_donors_pushes_spread = { value: round(Math.abs(large.pushes - small.pushes)), unit: `pushes/job (N=${SIZES[1]} − N=${SIZES[0]})`, target: "flat: ≤ 1", pass: Math.abs(large.pushes - small.pushes) <= 1 };
  saveFigures("fanout_donors", figures, MEASURES);
  expect(large.calls).toBeGreaterThan(0);
});
