import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFailed } from "vitest";
import { internal } from "../../convex/_generated/api";
import { checkConsistency } from "../backend/sweep/consistency";
import { seededRng } from "../backend/sweep/prng";
import { startTestServer, type TestServer } from "../server";
import { auditRun } from "./audit";
import { planFaults, runChaos } from "./chaos";
import { backendOf, readEvents, readJobs, Submitter } from "./farm";
import { CliFleet, SLOTS_PER_WORKER, WORKER_CAPABILITIES, writeRecipesFile } from "./fleet";
import { DOOMED_ATTEMPTS, planJobs } from "./jobMix";
import { formatTable } from "./summary";
import { isAlive, orphanedFrozenRunners, parsePs } from "../../extension/handlers/orphans";

/** Stopped job processes whose worker process is gone (what a SIGKILL during a suspension leaves behind). */
function frozenOrphans(): Promise<number[]> {
  return new Promise((resolve, reject) =>
    execFile("ps", ["-A", "-o", "pid=,stat=,args="], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(new Error(`ps failed: ${error.message}`)) : resolve(orphanedFrozenRunners(parsePs(stdout), isAlive)),
    ),
  );
}

// The fault and load suite (issue 6): real `farmhand-worker` processes against the loopback test server, while
// the run is attacked (SIGKILLs, connection drops, a revoked key, cancels, live submissions); then every job's
// end is audited against its design (audit.ts) and the tables against their invariants (consistency check).
// Randomness is seeded: the job mix, the fault plan and each pick come from FARMHAND_FAULTS_SEED (default
// below); wall-clock timing still varies from run to run, so a replay strikes the same faults at the same
// progress, not at the same instant.

const TOTAL_JOBS = 2_000;
const SEED = Number.isInteger(Number(process.env.FARMHAND_FAULTS_SEED)) ? Number(process.env.FARMHAND_FAULTS_SEED) : 20_261_122;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("fault and load suite", () => {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-faults-"));
  let server: TestServer | undefined;
  let fleet: CliFleet | undefined;
  let submitter: Submitter | undefined;

  afterAll(async () => {
    await fleet?.killAll();
    await submitter?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every worker process's log, tagged with the worker and the process, one line each. */
  const workerLines = () =>
    (fleet?.members ?? []).flatMap((m) =>
      m.runs.flatMap((run, k) => run.lines.map((line) => ({ who: `worker ${m.index + 1} (${m.workerId}) process ${k + 1}`, line }))),
    );

  it(`8 CLI workers × ${TOTAL_JOBS} jobs through kills, connection drops, a revoked key, cancels and live submissions (seed ${SEED})`, async () => {
    onTestFailed(() => {
      const file = join(tmpdir(), `farmhand-faults-${SEED}-workers.log`);
      writeFileSync(file, workerLines().map((l) => `${l.who}: ${l.line}`).join("\n") + "\n");
      console.error(`fault suite failed (seed ${SEED}); every worker's log is in ${file}`);
    });
    const rng = seededRng(SEED);
    const jobs = planJobs(rng, TOTAL_JOBS);
    const faults = planFaults(rng);
    server = await startTestServer();
    const seeded = await server.seed(WORKER_CAPABILITIES.length, { capabilities: ["recipe.flaky"], maxConcurrentJobs: SLOTS_PER_WORKER });
    fleet = new CliFleet(
      server.url,
      seeded.workerIds.map((workerId, i) => ({ workerId, apiKey: seeded.workerKeys[i] })),
      writeRecipesFile(dir),
    );
    await Promise.all(fleet.members.map((m) => fleet!.start(m)));
    submitter = new Submitter(server.url, seeded.clientKey);

    const started = Date.now();
    const tally = await runChaos({
      server,
      orgId: seeded.orgId,
      fleet,
      submitter,
      rng,
      jobs,
      faults,
      initialJobs: 600,
      backlog: 400,
      deadlineMs: 230_000,
    });
    const wallMs = Date.now() - started;

    // The revoked worker stopped on its own, saying why.
    const revoked = tally.revoked!;
    const revokedRun = fleet.current(revoked)!;
    expect(await within(revokedRun.exited, 20_000, "the revoked worker's exit")).toBe(4);
    expect(revokedRun.lines.join("\n")).toMatch(/worker stopped: this worker's key was revoked \(revoked\)/);

    expect(fleet.unexpectedExits()).toEqual([]);
    // Workers killed while their jobs were frozen left stopped job processes; their replacements ended them.
    expect(tally.suspendedKills).toBeGreaterThan(0);
    expect(await frozenOrphans()).toEqual([]);
    // The drops reached the real processes: they lost the connection and came back.
    const lines = workerLines().map((l) => l.line);
    expect(lines.filter((l) => / connection lost; reconnecting$/.test(l)).length).toBeGreaterThan(0);
    expect(lines.filter((l) => / connected$/.test(l)).length).toBeGreaterThan(0);

    const [rows, events] = [await readJobs(server), await readEvents(server)];
    const capabilitiesOf = new Map(fleet.members.map((m) => [m.workerId, WORKER_CAPABILITIES[m.index]]));
    const { problems, figures } = auditRun({
      submitted: submitter.submitted,
      rows,
      events,
      tally,
      workerLines: workerLines(),
      capabilitiesOf,
    });
    console.log(
      "\n" +
        formatTable(`Fault and load suite (seed ${SEED})`, [
          ["jobs", figures.jobs],
          ["succeeded", figures.succeeded],
          ["canceled (cancels asked / too late)", `${figures.canceled} (${tally.cancelsAsked} / ${tally.cancelsTooLate})`],
          [`dead (designed to fail, ${DOOMED_ATTEMPTS} attempts)`, figures.dead],
          ["workers / slots each", `${fleet.members.length} / ${SLOTS_PER_WORKER}`],
          ["SIGKILLs (jobs running on them)", `${tally.kills} (${tally.jobsHeldAtKill})`],
          ["of them with frozen jobs (SIGUSR1 first)", tally.suspendedKills],
          ["connection drops (total ms)", `${tally.drops} (${tally.dropMs})`],
          ["revoked worker", `#${revoked.index + 1}`],
          ["auto-paused workers restarted", tally.autoPauseRestarts],
          ["retries", figures.retries],
          ["lease expiries", figures.leaseExpiries],
          ["offers that passed on (TTL out)", figures.offersPassedOn],
          ["lost (must be 0)", figures.lost],
          ["duplicate completions (must be 0)", figures.duplicateCompletions],
          ["wall time", `${(wallMs / 1000).toFixed(1)} s`],
          ["jobs/s", (figures.jobs / (wallMs / 1000)).toFixed(1)],
        ]),
    );

    expect(problems.slice(0, 20), `${problems.length} problems`).toEqual([]);
    expect(figures).toMatchObject({ jobs: TOTAL_JOBS, lost: 0, duplicateCompletions: 0 });
    // The operator's dead-letter list is exactly the designed-to-fail jobs.
    const doomed = [...submitter.submitted].filter(([, job]) => job.kind === "doomed").map(([id]) => id);
    const deadLetters = await server.t.query(internal.admin.listDead, { orgId: seeded.orgId, limit: 100 });
    expect(doomed.length).toBeLessThan(100);
    expect(deadLetters.map((d) => d.jobId).sort()).toEqual(doomed.sort());
    expect(figures.dead).toBe(doomed.length);
    expect(tally.kills).toBe(faults.killAt.length);
    expect(tally.drops).toBe(faults.drops.length);
    expect(tally.mustBeCanceled.size).toBeGreaterThan(0);
    expect(figures.leaseExpiries).toBeGreaterThan(0);
    expect(await checkConsistency(backendOf(server))).toEqual([]);
  });
});
