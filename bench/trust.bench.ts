// Results you can trust (issue 20): a simulation on the loopback server with scripted workers (no job code):
// each worker claims through workers:claim and completes at once through workers:complete with the result its
// script says, honest (the payload's square) or not (a wrong value of its own: liars do not collude).
// Figures: jobs replicated after warm-up with adaptive trust, wrong results accepted with always-lying workers
// and with liars that build a streak first, and function executions per job for quorum 2 against quorum 1.
import { test } from "vitest";
import { api, internal } from "../convex/_generated/api";
import type { Id } from "../convex/_generated/dataModel";
import { TRUST } from "../convex/lib/validation";
import { startTestServer, type TestServer } from "../test/server";
import { saveFigures, type Figure } from "./results";

const MEASURES = ["bench/trust.bench.ts", "convex", "test/server"];

const WORKERS = 20;
const round = (n: number, digits = 3) => Number(n.toFixed(digits));

type Validation = { quorum: number; adaptive?: boolean };
/** What a scripted worker answers for job n; `streak` is its current streak for the job type. */
type Script = (n: number, streak: number) => number;

type Sim = { server: TestServer; clientKey: string; keys: string[]; ids: Array<Id<"workers">>; scripts: Script[] };

const honest: Script = (n) => n * n;

async function newSim(scripts: Script[]): Promise<Sim> {
  const server = await startTestServer({ crons: false });
  const orgId = await server.t.mutation(internal.admin.createOrg, { name: "trust sim" });
  const { key: clientKey } = await server.t.mutation(internal.admin.createClientKey, { orgId, name: "sim" });
  const keys: string[] = [];
  const ids: Array<Id<"workers">> = [];
  for (let i = 0; i < scripts.length; i++) {
    const { token } = await server.t.mutation(internal.admin.createEnrollment, { orgId, capabilities: ["sim"], maxConcurrentJobs: 1 });
    const w = await server.t.mutation(api.workers.enroll, { token, name: `w${i}`, machineId: `m${i}`, capabilities: ["sim"] });
    keys.push(w.apiKey);
    ids.push(w.workerId);
  }
  return { server, clientKey, keys, ids, scripts };
}

async function submit(sim: Sim, from: number, count: number, validation?: Validation): Promise<Array<Id<"jobs">>> {
  const ids: Array<Id<"jobs">> = [];
  for (let i = from; i < from + count; i += 200) {
    const jobs = Array.from({ length: Math.min(200, from + count - i) }, (_, k) => ({ type: "sim", payload: { n: i + k }, ...(validation ? { validation } : {}) }));
    ids.push(...(await sim.server.write((t) => t.mutation(api.jobs.submitBatch, { clientKey: sim.clientKey, jobs }))));
  }
  return ids;
}

async function streaks(sim: Sim): Promise<Map<string, number>> {
  const rows = await sim.server.t.run(async (ctx) => await ctx.db.query("trustStreaks").collect());
  return new Map(rows.map((r) => [r.workerId as string, r.streak]));
}

/**
 * Workers take turns: each claims one job and completes it with its script's answer, until every job is
 * final. Returns the lies told (answers that were not the square) with the liar's streak at the time.
 */
async function work(sim: Sim, ids: Array<Id<"jobs">>): Promise<{ lies: number[] }> {
  const lies: number[] = [];
  const needsStreak = sim.scripts.some((s) => s !== honest);
  let finished = 0;
  let idleRounds = 0;
  for (let turn = 0; finished < ids.length; turn++) {
    const w = turn % sim.keys.length;
    if (w === 0) {
      if (idleRounds > 100) throw new Error(`the simulation stalled with ${ids.length - finished} jobs open`);
      idleRounds++;
    }
    const [lease] = await sim.server.write((t) => t.mutation(api.workers.claim, { apiKey: sim.keys[w], capabilities: ["sim"] }));
    if (!lease) {
      // a whole round handed out nothing: give the dispatcher (real timers) a moment
      if (w === sim.keys.length - 1 && idleRounds > 1) await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    idleRounds = 0;
    const n = (lease.payload as { n: number }).n;
    const streak = needsStreak ? ((await streaks(sim)).get(sim.ids[w]) ?? 0) : 0;
    const answer = sim.scripts[w](n, streak);
    if (answer !== n * n) lies.push(streak);
    const { status } = await sim.server.write((t) => t.mutation(api.workers.complete, { apiKey: sim.keys[w], leaseId: lease.leaseId, result: answer, cpuMs: 1 }));
    if (status !== "pending") finished++;
  }
  return { lies };
}

type Outcome = { succeeded: number; wrong: number; dead: number; replicated: number; instances: number };

async function outcome(sim: Sim, ids: Array<Id<"jobs">>): Promise<Outcome> {
  const o: Outcome = { succeeded: 0, wrong: 0, dead: 0, replicated: 0, instances: 0 };
  // in slices: one transaction reads at most a few hundred jobs
  for (let from = 0; from < ids.length; from += 250) {
    await sim.server.t.run(async (ctx) => {
      for (const id of ids.slice(from, from + 250)) {
        const job = (await ctx.db.get(id))!;
        const instances = (await ctx.db.query("jobInstances").withIndex("by_job", (q) => q.eq("jobId", id)).collect()).length;
        o.instances += Math.max(1, instances);
        if (instances > 1) o.replicated++;
        if (job.status === "dead") o.dead++;
        if (job.status !== "succeeded") continue;
        o.succeeded++;
        const payload = (await ctx.db.query("jobBodies").withIndex("by_job_part", (q) => q.eq("jobId", id).eq("part", "payload")).unique())!.value as { n: number };
        const result = (await ctx.db.query("jobBodies").withIndex("by_job_part", (q) => q.eq("jobId", id).eq("part", "result")).unique())!.value as number;
        if (result !== payload.n * payload.n) o.wrong++;
      }
    });
  }
  return o;
}

const calls = (server: TestServer) => Object.values(server.stats().functions).reduce((sum, f) => sum + f.calls, 0);

/** A liar that never colludes: its wrong answer is its own. */
const liar = (index: number): Script => (n) => n * n + 1 + index;

test("replication, quorum and adaptive trust against honest and lying scripted workers", async () => {
  const figures: Record<string, Figure> = {};

  // 1. Honest workers, adaptive: warm up (every worker reaches the trusted streak), then 2,000 jobs.
  {
    const sim = await newSim(Array.from({ length: WORKERS }, () => honest));
    await work(sim, await submit(sim, 0, 200, { quorum: 2, adaptive: true }));
    const warm = await streaks(sim);
    const weakest = Math.min(...sim.ids.map((id) => warm.get(id) ?? 0));
    const ids = await submit(sim, 200, 2_000, { quorum: 2, adaptive: true });
    await work(sim, ids);
    const o = await outcome(sim, ids);
    const fraction = o.replicated / ids.length;
    console.log(`honest adaptive: weakest streak after warm-up ${weakest}; ${o.replicated} of ${ids.length} jobs replicated; ${o.wrong} wrong`);
    figures["jobs replicated after warm-up, 20 honest workers, adaptive, 2000 jobs"] = {
      value: round(100 * fraction, 1),
      unit: "%",
      target: "5–10 % (BOINC)",
      pass: fraction >= 0.05 && fraction <= 0.1,
    };
    figures["weakest worker's streak after a 200-job warm-up"] = { value: weakest, unit: "valid results", target: `≥ ${TRUST.trustedStreak}`, pass: weakest >= TRUST.trustedStreak };
    await sim.server.close();
  }

  // 2. 20 % of workers always lie (each its own wrong value), quorum 2.
  {
    const scripts = Array.from({ length: WORKERS }, (_, i) => (i % 5 === 0 ? liar(i) : honest));
    const sim = await newSim(scripts);
    const ids = await submit(sim, 0, 500, { quorum: 2 });
    const { lies } = await work(sim, ids);
    const o = await outcome(sim, ids);
    console.log(`always-lying 20 %: ${lies.length} lies, ${o.wrong} wrong accepted, ${o.dead} no_quorum, ${round(o.instances / ids.length, 2)} instances per job`);
    figures["wrong results accepted, 20 % of workers always lying, quorum 2 (500 jobs)"] = { value: o.wrong, unit: "jobs", target: "0 (no collusion)", pass: o.wrong === 0 };
    figures["lies told by the always-lying workers (500 jobs)"] = { value: lies.length, unit: "results" };
    await sim.server.close();
  }

  // 3. Adaptive trust, liars (20 %) answer honestly until trusted, then lie 10 % of the time.
  {
    let seed = 20_261_127;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const patient: Script = (n, streak) => (streak >= TRUST.trustedStreak && random() < 0.1 ? n * n + 1 + Math.floor(random() * 1e6) : n * n);
    const scripts = Array.from({ length: WORKERS }, (_, i) => (i % 5 === 0 ? patient : honest));
    const sim = await newSim(scripts);
    await work(sim, await submit(sim, 0, 200, { quorum: 2, adaptive: true }));
    const ids = await submit(sim, 200, 2_000, { quorum: 2, adaptive: true });
    const { lies } = await work(sim, ids);
    const o = await outcome(sim, ids);
    const meanStreak = lies.length === 0 ? 0 : lies.reduce((a, b) => a + b, 0) / lies.length;
    const bound = meanStreak === 0 ? 0 : 1 - 1 / meanStreak;
    console.log(`patient liars: ${lies.length} lies at mean streak ${round(meanStreak, 1)}, ${o.wrong} accepted`);
    figures["wrong results accepted, adaptive, liars lie 10 % once trusted (2000 jobs)"] = { value: o.wrong, unit: "jobs" };
    figures["share of those lies accepted"] = { value: lies.length === 0 ? 0 : round(o.wrong / lies.length), unit: "of lies" };
    figures["BOINC's bound for that share: 1 − 1/streak at the lies' mean streak"] = { value: round(bound), unit: "of lies" };
    await sim.server.close();
  }

  // 4. Function executions per job (every function the server ran: claims, completions, dispatcher rounds, timers).
  {
    const perJob: Record<number, number> = {};
    for (const quorum of [1, 2]) {
      const sim = await newSim(Array.from({ length: WORKERS }, () => honest));
      sim.server.resetStats();
      const ids = await submit(sim, 0, 300, { quorum });
      await work(sim, ids);
      // the timers the jobs set (summaries) run out before counting
      await new Promise((r) => setTimeout(r, 2_500));
      perJob[quorum] = calls(sim.server) / ids.length;
      await sim.server.close();
    }
    const ratio = perJob[2] / perJob[1];
    console.log(`function executions per job: quorum 1 ${round(perJob[1], 2)}, quorum 2 ${round(perJob[2], 2)}`);
    figures["function executions per job, quorum 1 (300 jobs, 20 workers)"] = { value: round(perJob[1], 2), unit: "executions" };
    figures["function executions per job, quorum 2 (300 jobs, 20 workers)"] = { value: round(perJob[2], 2), unit: "executions" };
    figures["quorum 2 ÷ quorum 1 function executions per job"] = { value: round(ratio, 2), unit: "×", target: "≤ 2.2×", pass: ratio <= 2.2 };
  }

  saveFigures("trust", figures, MEASURES);
}, 1_800_000);
