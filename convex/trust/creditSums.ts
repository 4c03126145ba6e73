import type { Doc } from "../_generated/dataModel";

/** The credit figures every credit row (a worker's day, week and all time) keeps, and how they add up. */

export type Credit = { cpuMs: number; measured: boolean };

export type Totals = { cpuMs: number; wallMs: number; jobs: number; failed: number; canceledAtQuorum: number };

/**
 * How an attempt ended, for the counts beside the CPU time: `completed` (workers:complete), `failed`
 * (workers:fail), or `canceledAtQuorum`: an instance of a replicated job canceled because the others agreed,
 * which is no failure of its donor.
 */
export type Outcome = "completed" | "failed" | "canceledAtQuorum";

/** What credit rows add up to when read: the credit, and the energy its attempts used (trust/energy.ts writes it). */
export type Given = Totals & { energyJ: number };

type Row = Pick<Doc<"creditDays">, "cpuMs" | "wallMs" | "jobs" | "failed" | "canceledAtQuorum" | "energyJ">;

export const ZERO: Totals = { cpuMs: 0, wallMs: 0, jobs: 0, failed: 0, canceledAtQuorum: 0 };
export const NOTHING: Given = { ...ZERO, energyJ: 0 };

/** A row's figures with one attempt's credit added. */
export function added(row: Row, credit: Credit, outcome: Outcome): Totals {
  return {
    cpuMs: row.cpuMs + credit.cpuMs,
    wallMs: row.wallMs + (credit.measured ? 0 : credit.cpuMs),
    jobs: row.jobs + (outcome === "completed" ? 1 : 0),
    failed: row.failed + (outcome === "failed" ? 1 : 0),
    canceledAtQuorum: (row.canceledAtQuorum ?? 0) + (outcome === "canceledAtQuorum" ? 1 : 0),
  };
}

/** Two rows' figures summed, energy included. */
export function sum(a: Row, b: Row): Given {
  return {
    cpuMs: a.cpuMs + b.cpuMs,
    wallMs: a.wallMs + b.wallMs,
    jobs: a.jobs + b.jobs,
    failed: a.failed + b.failed,
    canceledAtQuorum: (a.canceledAtQuorum ?? 0) + (b.canceledAtQuorum ?? 0),
    energyJ: (a.energyJ ?? 0) + (b.energyJ ?? 0),
  };
}
