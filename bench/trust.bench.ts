// Results you can trust (issue 20, issue 30): a simulation on the loopback server with scripted workers (no job
// code): each worker claims through workers:claim and completes at once through workers:complete with the result
// its script says, honest (the payload's square) or not (a wrong value of its own, or, colluding, the same wrong
// value as the other colluders), or fails it through workers:fail (a saboteur).
// Figures: jobs replicated after warm-up with adaptive trust, wrong results accepted with always-lying workers
// and with liars that build a streak first, function executions per job for quorum 2 against quorum 1, jobs lost
// to saboteurs that fail every instance, and lies accepted from colluders of one donor (distinct machine / donor).
import { afterAll, test } from "vitest";
import { api, internal } from "../convex/_generated/api";
import type { Id } from "../convex/_generated/dataModel";
import { TRUST, type ValidationSpec } from "../convex/trust/validation";
import { seededRng } from "../test/backend/sweep/prng";
import { startTestServer, type TestServer } from "../test/server";
import { saveFigures, type Figure } from "./results";

const MEASURES = ["bench/trust.bench.ts", "convex", "test/server"];

const WORKERS = 20;
const round = (n: number, digits = 3) => Number(n.toFixed(digits));

/** What a scripted worker answers for job n (`"fail"`: it fails the instance); `streak` is its current streak for the job type. */
type Script = (n: number, streak: number) => number | "fail";

type Sim = { server: TestServer; clientKey: string; keys: string[]; ids: Array<Id<"workers">>; scripts: Script[] };

const honest: Script = (n) => n * n;

/** `donors`: each worker's enrollment's donor label (none: a donor of its own). */
async function newSim(scripts: Script[], donors: Array<string | undefined> = []): Promise<Sim> {
  const server = await startTestServer({ crons: false });
  const orgId = await server.t.mutation(internal.admin.createOrg, { name: "trust sim" });
  const { key: clientKey } = await server.t.mutation(internal.admin.createClientKey, { orgId, name: "sim" });
  const keys: string[] = [];
  const ids: Array<Id<"workers">> = [];
  for (let i = 0; i < scripts.length; i++) {
    const donor = donors[i] === undefined ? {} : { donor: donors[i] };
    const { token } = await server.t.mutation(internal.admin.createEnrollment, { orgId, capabilities: ["sim"], maxConcurrentJobs: 1, ...donor });
    const w = await server.t.mutation(api.workers.enroll, { token, name: `w${i}`, machineId: `m${i}`, capabilities: ["sim"] });
    keys.push(w.apiKey);
    ids.push(w.workerId);
  }
  return { server, clientKey, keys, ids, scripts };
}

async function submit(sim: Sim, from: number, count: number, validation?: ValidationSpec): Promise<Array<Id<"jobs">>> {
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

/** Seeded pseudo-random numbers in [0, 1) (the same runs every time). */
function seeded(seed: number): () => number {
  const rng = seededRng(seed);
  return () => rng.next();
}

/**
 * Workers take turns: each claims one job and completes it with its script's answer (or fails it: every other
 * failure with `retryable: false`), until every job is final. `shuffle`: each round's turn order is drawn at
 * random, so which workers meet a job is a fair draw. A failed instance's job waits its retry backoff (real
 * timers), so rounds that hand out nothing are normal: the simulation gives up after a minute without a claim.
 * Returns the lies told (answers that were not the square) with the liar's streak at the time, and the failures.
 */
async function work(sim: Sim, ids: Array<Id<"jobs">>, shuffle?: () => number): Promise<{ lies: number[]; failures: number }> {
  const lies: number[] = [];
  let failures = 0;
  const needsStreak = sim.scripts.some((s) => s !== honest);
  let finished = 0;
  let lastClaim = Date.now();
  let order = sim.keys.map((_, i) => i);
  for (let turn = 0; finished < ids.length; turn++) {
    if (turn % sim.keys.length === 0) {
      if (Date.now() - lastClaim > 60_000) throw new Error(`the simulation stalled with ${ids.length - finished} jobs open`);
      if (shuffle) order = order.map((i) => ({ i, key: shuffle() })).sort((a, b) => a.key - b.key).map((x) => x.i);
    }
    const w = order[turn % sim.keys.length];
    const [lease] = await sim.server.write((t) => t.mutation(api.workers.claim, { apiKey: sim.keys[w], capabilities: ["sim"] }));
    if (!lease) {
      // a whole round handed out nothing: give the dispatcher and retry backoffs (real timers) a moment
      if (turn % sim.keys.length === sim.keys.length - 1 && Date.now() - lastClaim > 50) await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    lastClaim = Date.now();
    const n = (lease.payload as { n: number }).n;
    const streak = needsStreak ? ((await streaks(sim)).get(sim.ids[w]) ?? 0) : 0;
    const answer = sim.scripts[w](n, streak);
    if (answer === "fail") {
      const retryable = failures++ % 2 === 0;
      const { status } = await sim.server.write((t) => t.mutation(api.workers.fail, { apiKey: sim.keys[w], leaseId: lease.leaseId, error: "sabotage", retryable }));
      if (status === "dead") finished++;
      continue;
    }
    if (answer !== n * n) lies.push(streak);
    const { status } = await sim.server.write((t) => t.mutation(api.workers.complete, { apiKey: sim.keys[w], leaseId: lease.leaseId, result: answer, cpuMs: 1 }));
    if (status !== "pending") finished++;
  }
  return { lies, failures };
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
/** A colluder: every colluder gives the same wrong answer. */
const colluder: Script = (n) => n * n + 1;
/** A saboteur: it fails every instance it gets. */
const saboteur: Script = () => "fail";

/**
 * The chance that the `bad` workers of a farm reach `badNeed` instances of a job before the `good` ones reach
 * `goodNeed`, when each instance goes to a worker drawn at random among those that have not run one of it (the
 * farm's rule: never twice on one worker or machine).
 */
function firstTo(bad: number, good: number, badNeed: number, goodNeed: number): number {
  const memo = new Map<string, number>();
  const chance = (b: number, g: number): number => {
    if (b >= badNeed) return 1;
    if (g >= goodNeed) return 0;
    const left = bad - b + good - g;
    if (left === 0) return 0;
    const key = `${b},${g}`;
    if (!memo.has(key)) memo.set(key, ((bad - b) / left) * chance(b + 1, g) + ((good - g) / left) * chance(b, g + 1));
    return memo.get(key)!;
  };
  return chance(0, 0);
}

/** Is `observed` of `n` trials at most 3 standard deviations (and one trial) above a chance `p`? */
const atMost3SigmaAbove = (observed: number, n: number, p: number) => observed - n * p <= 3 * Math.sqrt(n * p * (1 - p)) + 1;

const figures: Record<string, Figure> = {};
afterAll(() => saveFigures("trust", figures, MEASURES));

test("replication, quorum and adaptive trust against honest and lying scripted workers", async () => {

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
}, 1_800_000);

const SABOTAGED_JOBS = 400;

/** `count` of the 20 workers (every k-th) run `bad`, the rest are honest. */
function mixed(count: number, bad: Script): Script[] {
  const step = WORKERS / count;
  return Array.from({ length: WORKERS }, (_, i) => (i % step < 1 && Math.floor(i / step) < count ? bad : honest));
}

test("saboteurs failing every instance (half with retryable: false) lose no job", async () => {
  const run = async (count: number, validation: ValidationSpec, seed: number) => {
    const sim = await newSim(mixed(count, saboteur));
    const ids = await submit(sim, 0, SABOTAGED_JOBS, validation);
    const { failures } = await work(sim, ids, seeded(seed));
    const o = await outcome(sim, ids);
    await sim.server.close();
    console.log(`saboteurs ${count}/${WORKERS} ${JSON.stringify(validation)}: ${failures} failures, ${o.dead} lost, ${o.wrong} wrong, ${round(o.instances / ids.length, 2)} instances per job`);
    return { lost: ids.length - o.succeeded, wrong: o.wrong, failures };
  };
  const low = await run(2, { quorum: 2 }, 11);
  figures[`jobs lost, saboteurs s = 0.1 (2 of 20), quorum 2, defaults (${SABOTAGED_JOBS} jobs)`] = { value: low.lost, unit: "jobs", target: "0", pass: low.lost === 0 && low.wrong === 0 };
  figures["instance failures by those saboteurs"] = { value: low.failures, unit: "failed instances" };
  const high = await run(6, { quorum: 2, maxErrorInstances: 10 }, 12);
  figures[`jobs lost, saboteurs s = 0.3 (6 of 20), quorum 2, maxErrorInstances 10 (${SABOTAGED_JOBS} jobs)`] = { value: high.lost, unit: "jobs", target: "0", pass: high.lost === 0 && high.wrong === 0 };
  // with the default maxErrorInstances (= maxInstances, 4 for quorum 2), 6 saboteurs can fail a job 4 times first
  const defaults = await run(6, { quorum: 2 }, 13);
  const expected = SABOTAGED_JOBS * firstTo(6, WORKERS - 6, 4, 2);
  figures[`jobs lost, saboteurs s = 0.3, quorum 2, defaults (maxErrorInstances 4) (${SABOTAGED_JOBS} jobs)`] = { value: defaults.lost, unit: "jobs" };
  figures["expected for that: 4 saboteurs drawn before 2 honest workers"] = { value: round(expected, 1), unit: "jobs" };
}, 1_800_000);

const COLLUDED_JOBS = 500;

/**
 * Colluders of one donor agree on one wrong value. With distinct machines a lie is accepted when two colluders run a
 * job before two honest workers do: at most the chance of that draw (about f², more since a disagreement draws a
 * third instance), and less in practice, as each invalid result halves a colluder's daily quota (it is handed
 * fewer jobs). With distinct donors, never.
 */
test("colluders of one donor agreeing on one wrong value: accepted ≈ f² with distinct machines, never with distinct donors", async () => {
  const run = async (count: number, distinct: "machine" | "donor", seed: number) => {
    const scripts = mixed(count, colluder);
    const sim = await newSim(scripts, scripts.map((s) => (s === colluder ? "mallory" : undefined)));
    const ids = await submit(sim, 0, COLLUDED_JOBS, { quorum: 2, distinct });
    await work(sim, ids, seeded(seed));
    const o = await outcome(sim, ids);
    await sim.server.close();
    console.log(`colluders ${count}/${WORKERS}, distinct ${distinct}: ${o.wrong} of ${ids.length} wrong, ${o.dead} dead`);
    return o.wrong;
  };
  for (const [count, seed] of [[2, 21], [4, 22], [6, 23]] as const) {
    const f = count / WORKERS;
    const wrong = await run(count, "machine", seed);
    const model = firstTo(count, WORKERS - count, 2, 2);
    figures[`wrong results accepted, colluders f = ${f} (one donor), distinct "machine" (${COLLUDED_JOBS} jobs)`] = {
      value: round(wrong / COLLUDED_JOBS, 4),
      unit: "of jobs",
      target: `≤ ${round(model, 4)} + 3σ (two colluders drawn before two honest workers; f² = ${round(f * f, 4)})`,
      pass: atMost3SigmaAbove(wrong, COLLUDED_JOBS, model),
    };
  }
  const wrong = await run(6, "donor", 24);
  figures[`wrong results accepted, colluders f = 0.3 (one donor), distinct "donor" (${COLLUDED_JOBS} jobs)`] = { value: wrong, unit: "jobs", target: "0", pass: wrong === 0 };
}, 1_800_000);
