import { internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { Rng } from "../backend/sweep/prng";
import type { TestServer } from "../server";
import { readUnfinished, type JobRow, type Submitter } from "./farm";
import type { CliFleet, Member } from "./fleet";
import type { PlannedJob } from "./jobMix";

/** When (as a fraction of all jobs finished) each fault strikes; drawn from the seed. */
export type FaultPlan = {
  killAt: number[];
  drops: Array<{ at: number; ms: number }>;
  revokeAt: number;
  runningCancels: number;
  pendingCancels: number;
};

export function planFaults(rng: Rng): FaultPlan {
  const between = (lo: number, hi: number) => lo + rng.next() * (hi - lo);
  return {
    killAt: Array.from({ length: 8 }, () => between(0.03, 0.8)).sort((a, b) => a - b),
    drops: Array.from({ length: 3 }, () => ({ at: between(0.1, 0.8), ms: 1_000 + rng.int(1_500) })).sort((a, b) => a.at - b.at),
    revokeAt: between(0.3, 0.6),
    runningCancels: 30,
    pendingCancels: 10,
  };
}

export type Tally = {
  kills: number;
  /** Of the kills, those of a worker whose jobs were frozen (SIGUSR1) first: suspended heartbeats, then silence. */
  suspendedKills: number;
  /** Jobs the server had running on a worker at the moment it was killed. */
  jobsHeldAtKill: number;
  drops: number;
  dropMs: number;
  revoked?: Member;
  cancelsAsked: number;
  /** Jobs whose cancel the server accepted: they must end canceled. */
  mustBeCanceled: Set<string>;
  /** Cancels that arrived after the job had finished (nothing to check but that it stays as it was). */
  cancelsTooLate: number;
  /** Workers restarted because they had auto-paused after repeated handler failures. */
  autoPauseRestarts: number;
};

export type ChaosOptions = {
  server: TestServer;
  orgId: string;
  fleet: CliFleet;
  submitter: Submitter;
  rng: Rng;
  jobs: PlannedJob[];
  faults: FaultPlan;
  /** Jobs submitted before the first fault; the rest follow as the queue drains. */
  initialJobs: number;
  /** Unfinished jobs kept queued while more remain to submit. */
  backlog: number;
  deadlineMs: number;
};

const TICK_MS = 400;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Drive the run: keep submitting while the queue drains, and strike each planned fault once the run has
 * progressed far enough. Returns when every job is submitted and final, or throws at the deadline.
 */
export async function runChaos(o: ChaosOptions): Promise<Tally> {
  const tally: Tally = {
    kills: 0,
    suspendedKills: 0,
    jobsHeldAtKill: 0,
    drops: 0,
    dropMs: 0,
    cancelsAsked: 0,
    mustBeCanceled: new Set(),
    cancelsTooLate: 0,
    autoPauseRestarts: 0,
  };
  const { fleet, submitter, rng, jobs, faults } = o;
  const restarts: Array<Promise<void>> = [];
  const restartErrors: Error[] = [];
  // Kept handled at once: the run may end (or fail) before a replacement is up.
  const replace = (member: Member, afterMs: number) =>
    restarts.push(
      sleep(afterMs)
        .then(() => fleet.start(member))
        .catch((e: Error) => void restartErrors.push(e)),
    );
  const killAt = [...faults.killAt];
  const drops = [...faults.drops];
  let revokeAt: number | undefined = faults.revokeAt;
  let runningCancels = 0;
  let pendingCancels = 0;
  let next = 0;
  const total = jobs.length;
  const deadline = Date.now() + o.deadlineMs;

  await submitter.submit(jobs.slice(0, o.initialJobs));
  next = o.initialJobs;

  for (;;) {
    const rows = await readUnfinished(o.server, o.orgId);
    const finished = next - rows.length;
    const progress = finished / total;
    if (next === total && rows.length === 0) break;
    if (Date.now() > deadline) throw new Error(`the run did not finish in ${o.deadlineMs} ms: ${describe(rows, next)}`);

    if (next < total && rows.length < o.backlog) {
      const count = Math.min(50, total - next);
      await submitter.submit(jobs.slice(next, next + count));
      next += count;
    }

    if (killAt.length && progress >= killAt[0]) {
      const target = pickKillTarget(fleet, rows, rng);
      if (target) {
        killAt.shift();
        tally.jobsHeldAtKill += rows.filter((r) => r.status === "running" && r.workerId === target.workerId).length;
        if (tally.kills % 2 === 0) {
          // Every other kill strikes a worker whose jobs are frozen: its leases are kept by suspended heartbeats
          // until it dies, then must run out like any other; its replacement ends the frozen job processes.
          await fleet.suspend(target);
          await sleep(1_500);
          tally.suspendedKills++;
        }
        await fleet.kill(target);
        tally.kills++;
        replace(target, 300 + rng.int(1_200));
      }
    }

    if (drops.length && progress >= drops[0].at) {
      const { ms } = drops.shift()!;
      tally.drops++;
      tally.dropMs += ms;
      await o.server.dropConnections(ms);
    }

    if (revokeAt !== undefined && progress >= revokeAt) {
      const candidates = fleet.up();
      if (candidates.length) {
        const target = rng.pick(candidates);
        target.revoked = true;
        revokeAt = undefined;
        tally.revoked = target;
        await o.server.write((t) => t.mutation(internal.admin.revokeWorker, { workerId: target.workerId as Id<"workers"> }));
      }
    }

    // Cancels are spread over the first 90 % of the run.
    const due = Math.min(1, progress / 0.9);
    if (runningCancels < faults.runningCancels * due) {
      const running = rows.filter((r) => r.status === "running" && !r.cancelRequested && kindOf(submitter, r) === "long");
      if (running.length) {
        runningCancels++;
        await cancel(submitter, rng.pick(running)._id, tally);
      }
    }
    if (pendingCancels < faults.pendingCancels * due) {
      const pending = rows.filter((r) => r.status === "pending" && kindOf(submitter, r) === "echo");
      if (pending.length) {
        pendingCancels++;
        await cancel(submitter, rng.pick(pending)._id, tally);
      }
    }

    tally.autoPauseRestarts += await restartAutoPaused(fleet, replace);
    await sleep(TICK_MS);
  }
  await Promise.all(restarts);
  if (restartErrors.length) throw restartErrors[0];
  if (killAt.length || drops.length || revokeAt !== undefined) {
    throw new Error(`the run ended before every fault struck: ${killAt.length} kills, ${drops.length} drops, revoke ${revokeAt !== undefined}`);
  }
  return tally;
}

function kindOf(submitter: Submitter, row: JobRow): string | undefined {
  return submitter.submitted.get(row._id)?.kind;
}

async function cancel(submitter: Submitter, jobId: string, tally: Tally): Promise<void> {
  tally.cancelsAsked++;
  if (await submitter.cancel(jobId)) tally.mustBeCanceled.add(jobId);
  else tally.cancelsTooLate++;
}

/** A live worker, preferably one the server has running jobs on (so the kill strands leases). */
function pickKillTarget(fleet: CliFleet, rows: JobRow[], rng: Rng): Member | undefined {
  const up = fleet.up();
  const busy = up.filter((m) => rows.some((r) => r.status === "running" && r.workerId === m.workerId));
  return busy.length ? rng.pick(busy) : up.length ? rng.pick(up) : undefined;
}

/**
 * The headless worker auto-pauses after repeated handler failures and has no resume: an operator would
 * restart it. Designed-to-fail jobs can trip that, so the run does what an operator would.
 */
async function restartAutoPaused(fleet: CliFleet, replace: (member: Member, afterMs: number) => void): Promise<number> {
  let restarted = 0;
  for (const member of fleet.up()) {
    if (!fleet.current(member)!.lines.some((l) => / worker paused: auto-paused/.test(l))) continue;
    await fleet.terminate(member);
    replace(member, 0);
    restarted++;
  }
  return restarted;
}

function describe(rows: JobRow[], submitted: number): string {
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return `${submitted} submitted, unfinished: ${JSON.stringify(counts)}`;
}
