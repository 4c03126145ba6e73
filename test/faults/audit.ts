import { isDeepStrictEqual } from "node:util";
import type { Tally } from "./chaos";
import { isFinal, type EventRow, type JobRow } from "./farm";
import type { PlannedJob } from "./jobMix";

export type AuditInput = {
  submitted: Map<string, PlannedJob>;
  rows: JobRow[];
  events: EventRow[];
  tally: Tally;
  /** Every log line of every worker process of the run, tagged with who wrote it. */
  workerLines: Array<{ who: string; line: string }>;
  /** workerId → the capabilities that worker advertises. */
  capabilitiesOf: Map<string, string[]>;
};

export type Figures = {
  jobs: number;
  succeeded: number;
  canceled: number;
  dead: number;
  retries: number;
  leaseExpiries: number;
  /** Offers not claimed within their TTL (the worker was killed, cut off or revoked) that went to another worker. */
  offersPassedOn: number;
  lost: number;
  duplicateCompletions: number;
};

const SUCCEEDED_LINE = /^\S+ job (\S+) \S+ succeeded in \d+ ms/;

function countBy<T>(items: T[], key: (item: T) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/**
 * Check how every job ended against what it was designed to do and what the run did to it. Returns the
 * problems (empty when the farm kept every promise) and the figures for the summary.
 */
export function auditRun({ submitted, rows, events, tally, workerLines, capabilitiesOf }: AuditInput): { problems: string[]; figures: Figures } {
  const problems: string[] = [];
  const rowsById = new Map(rows.map((r) => [r._id as string, r]));
  const eventsByJob = new Map<string, EventRow[]>();
  for (const e of events) eventsByJob.set(e.jobId, [...(eventsByJob.get(e.jobId) ?? []), e]);
  const kinds = (id: string, kind: string) => (eventsByJob.get(id) ?? []).filter((e) => e.kind === kind);

  // Nothing lost, nothing extra: exactly the submitted jobs exist, each in a final state.
  let lost = 0;
  for (const id of submitted.keys()) {
    const row = rowsById.get(id);
    if (!row) problems.push(`job ${id} was submitted but is not in the table`);
    else if (!isFinal(row)) problems.push(`job ${id} is still ${row.status}`);
    if (!row || !isFinal(row)) lost++;
  }
  for (const row of rows) if (!submitted.has(row._id)) problems.push(`job ${row._id} is in the table but was never submitted`);

  // No job succeeded twice: one "done" per succeeded job, none for the others; the workers agree.
  let duplicateCompletions = 0;
  const doneCounts = countBy(events, (e) => (e.kind === "done" ? e.jobId : undefined));
  for (const [id, count] of doneCounts) {
    if (count > 1) {
      duplicateCompletions++;
      problems.push(`job ${id} is done ${count} times`);
    }
  }
  const observed = countBy(workerLines, (l) => SUCCEEDED_LINE.exec(l.line)?.[1]);
  for (const [id, count] of observed) {
    if (count > 1) {
      duplicateCompletions++;
      const said = workerLines.filter((l) => l.line.includes(id)).map((l) => `${l.who}: ${l.line}`);
      const history = (eventsByJob.get(id) ?? []).map((e) => `${e.kind}#${e.attempt}@${e.at}${e.workerId ? ` by ${e.workerId}` : ""}`);
      problems.push(`job ${id}: logged succeeded ${count} times\n  ${said.join("\n  ")}\n  events: ${history.join(", ")}`);
    }
    const status = rowsById.get(id)?.status;
    // A worker that completes a job whose cancel it had not yet seen ends it canceled, and says succeeded.
    const fine = status === "succeeded" || (status === "canceled" && tally.mustBeCanceled.has(id));
    if (!fine) problems.push(`job ${id}: a worker logged it succeeded, but the server has it ${status}`);
  }

  for (const [id, plan] of submitted) {
    const row = rowsById.get(id);
    if (!row) continue;
    const where = `job ${id} (${plan.kind}, n=${plan.n})`;
    if (row.status === "succeeded" && doneCounts.get(id) !== 1) problems.push(`${where} succeeded with ${doneCounts.get(id) ?? 0} done events`);
    if (row.status !== "succeeded" && doneCounts.has(id)) problems.push(`${where} is ${row.status} but has a done event`);

    const overlap = claimedWhileHeld(eventsByJob.get(id) ?? []);
    if (overlap) problems.push(`${where} was claimed while a worker held it: ${overlap}`);
    for (const claim of kinds(id, "claimed")) {
      const offered = capabilitiesOf.get(claim.workerId ?? "") ?? [];
      const missing = plan.spec.requiredCapabilities.filter((c) => !offered.includes(c));
      if (missing.length) problems.push(`${where} was claimed by ${claim.workerId}, which lacks ${missing.join(", ")}`);
    }

    const canceledByUs = tally.mustBeCanceled.has(id);
    if (canceledByUs !== (row.status === "canceled")) {
      problems.push(`${where} is ${row.status}; ${canceledByUs ? "its cancel was accepted" : "nobody canceled it"}`);
      continue;
    }
    if (canceledByUs) continue;

    const mustDie = plan.kind === "doomed";
    if (mustDie !== (row.status === "dead")) {
      problems.push(`${where} is ${row.status} after ${row.attempt}/${row.maxAttempts} attempts (last error: ${row.error ?? "none"})`);
      continue;
    }
    if (mustDie) {
      const spent = kinds(id, "failed").length + kinds(id, "heartbeat-expired").length;
      if (row.attempt !== row.maxAttempts || spent !== row.maxAttempts) {
        problems.push(`${where} is dead after attempt ${row.attempt}/${row.maxAttempts} with ${spent} failed or expired attempts`);
      }
      continue;
    }
    problems.push(...checkResult(where, plan, row));
    // Its first run fails by design (or is cut short by a fault); either way an attempt ended before success.
    const setbacks = ["failed", "heartbeat-expired", "released"].reduce((sum, kind) => sum + kinds(id, kind).length, 0);
    if (plan.kind === "flaky" && setbacks === 0) problems.push(`${where} succeeded without first failing`);
  }

  const status = countBy(rows, (r) => r.status);
  return {
    problems,
    figures: {
      jobs: submitted.size,
      succeeded: status.get("succeeded") ?? 0,
      canceled: status.get("canceled") ?? 0,
      dead: status.get("dead") ?? 0,
      retries: events.filter((e) => e.kind === "retried").length,
      leaseExpiries: events.filter((e) => e.kind === "heartbeat-expired").length,
      offersPassedOn: events.filter((e) => e.kind === "offer-expired").length,
      lost,
      duplicateCompletions,
    },
  };
}

const HOLD_ENDS = new Set(["released", "retried", "done", "canceled", "dead"]);

/** Never held by two workers at once: between two claims the first hold must have ended. */
function claimedWhileHeld(events: EventRow[]): string | undefined {
  let held = false;
  for (const e of events) {
    if (e.kind === "claimed") {
      if (held) return events.map((x) => x.kind).join(" → ");
      held = true;
    } else if (HOLD_ENDS.has(e.kind)) held = false;
  }
  return undefined;
}

/** A succeeded job's result is what its handler makes of its payload. */
function checkResult(where: string, plan: PlannedJob, row: JobRow): string[] {
  const result = row.result as Record<string, unknown> | null | undefined;
  const payload = plan.spec.payload;
  switch (plan.kind) {
    case "echo":
    case "long":
    case "wide":
      return isDeepStrictEqual(result, payload) ? [] : [`${where} echoed ${JSON.stringify(result)}`];
    case "primes":
      return result?.n === payload.n && typeof result?.count === "number" && result.count > 0
        ? []
        : [`${where} counted primes as ${JSON.stringify(result)}`];
    case "flaky":
      return result?.key === payload.key ? [] : [`${where} returned ${JSON.stringify(result)}`];
    default:
      return [];
  }
}
