import type { Rng } from "../backend/sweep/prng";

/** What a job is for, which decides how it must end. */
export type JobKind =
  | "echo" // quick demo.echo, some with streamed text
  | "long" // demo.echo that waits seconds: the jobs we cancel and the ones a kill catches mid-run
  | "primes" // demo.primes: only the workers that advertise it
  | "wide" // demo.echo that also requires demo.primes: a lane only some workers can serve
  | "flaky" // recipe.flaky that fails a few times, then succeeds
  | "doomed"; // recipe.flaky that always fails: must end dead after its attempts

export type JobSpec = {
  type: string;
  payload: Record<string, unknown>;
  priority: number;
  requiredCapabilities: string[];
  maxAttempts: number;
  leaseMs: number;
};

export type PlannedJob = { n: number; kind: JobKind; spec: JobSpec; failTimes?: number };

const LEASE_MS = 5_000; // the shortest lease the server accepts
// Generous for the jobs meant to succeed: kills and drops burn attempts too, and those must never exhaust them.
const ATTEMPTS_TO_SUCCEED = 10;
export const DOOMED_ATTEMPTS = 2;

function kindFor(rng: Rng): JobKind {
  const roll = rng.next();
  if (roll < 0.04) return "long";
  if (roll < 0.09) return "primes";
  if (roll < 0.14) return "wide";
  if (roll < 0.17) return "flaky";
  if (roll < 0.185) return "doomed";
  return "echo";
}

function priorityFor(rng: Rng): number {
  return rng.chance(0.2) ? 10 + rng.int(91) : rng.int(5);
}

function planJob(rng: Rng, n: number): PlannedJob {
  const kind = kindFor(rng);
  const base = { priority: priorityFor(rng), maxAttempts: ATTEMPTS_TO_SUCCEED, leaseMs: LEASE_MS };
  const key = `job-${n}`;
  switch (kind) {
    case "echo": {
      const payload: Record<string, unknown> = { n, delayMs: rng.int(40) };
      if (rng.chance(0.1)) payload.text = `echo ${n}\n`;
      return { n, kind, spec: { ...base, type: "demo.echo", payload, requiredCapabilities: ["demo.echo"] } };
    }
    case "long":
      return {
        n,
        kind,
        spec: { ...base, type: "demo.echo", payload: { n, delayMs: 2_500 + rng.int(3_500) }, requiredCapabilities: ["demo.echo"] },
      };
    case "primes":
      return {
        n,
        kind,
        spec: { ...base, type: "demo.primes", payload: { n: 20_000 + rng.int(100_000) }, requiredCapabilities: ["demo.primes"] },
      };
    case "wide":
      return {
        n,
        kind,
        spec: { ...base, type: "demo.echo", payload: { n, wide: true }, requiredCapabilities: ["demo.echo", "demo.primes"] },
      };
    case "flaky": {
      const failTimes = 1 + rng.int(2);
      return {
        n,
        kind,
        failTimes,
        spec: { ...base, type: "recipe.flaky", payload: { key, failTimes }, requiredCapabilities: ["recipe.flaky"] },
      };
    }
    case "doomed":
      return {
        n,
        kind,
        failTimes: 1_000_000,
        spec: {
          ...base,
          maxAttempts: DOOMED_ATTEMPTS,
          type: "recipe.flaky",
          payload: { key, failTimes: 1_000_000 },
          requiredCapabilities: ["recipe.flaky"],
        },
      };
  }
}

export function planJobs(rng: Rng, count: number): PlannedJob[] {
  return Array.from({ length: count }, (_, n) => planJob(rng, n));
}
