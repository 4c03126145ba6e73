import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api } from "../../../convex/_generated/api";
import { enrollWorker, type Enrolled, type Farm, newFarm, TEST_TYPES } from "../setup";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12));
});
afterEach(() => vi.useRealTimers());

type Given = { jobsDone: number; attemptsFailed: number; cpuMs: number };

/** One job run to its end by `worker`, reporting `cpuMs`; what it did is added to `given`. */
async function runJob(farm: Farm, worker: Enrolled, given: Given, cpuMs: number, outcome: "complete" | "fail" = "complete") {
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "credit.job", maxAttempts: 1 });
  const [claim] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  vi.advanceTimersByTime(10_000);
  if (outcome === "complete") {
    await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: claim.leaseId, result: 1, cpuMs });
    given.jobsDone++;
  } else {
    await farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: claim.leaseId, error: "no", retryable: false, cpuMs });
    given.attemptsFailed++;
  }
  given.cpuMs += cpuMs;
}

test("console:workers: every row shows that worker's own jobs done, failed attempts and CPU time, on every page", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true, name: "op", types: [] });
  const names = ["busy", "middling", "light"];
  const workers = new Map<string, Enrolled>();
  const given = new Map<string, Given>();
  for (const name of names) {
    workers.set(name, await enrollWorker(farm, { name }));
    given.set(name, { jobsDone: 0, attemptsFailed: 0, cpuMs: 0 });
  }
  const run = (name: string, cpuMs: number, outcome?: "complete" | "fail") => runJob(farm, workers.get(name)!, given.get(name)!, cpuMs, outcome);
  for (let i = 0; i < 4; i++) await run("busy", 9_000 + i);
  await run("busy", 3_000, "fail");
  for (let i = 0; i < 2; i++) await run("middling", 5_000 + i);
  await run("light", 1_000);
  await run("light", 500, "fail");
  // the page lists the most recently seen first: light, busy, middling, then the operator's own worker
  for (const name of ["middling", "busy", "light"]) {
    vi.advanceTimersByTime(1_000);
    await farm.t.mutation(api.workers.presence, { apiKey: workers.get(name)!.apiKey });
  }

  const whole = (await farm.t.query(api.console.workers, { apiKey: op.apiKey })).page;
  expect(whole.map((w) => w.name)).toEqual(["light", "busy", "middling", "op"]);
  const expected = (name: string) => ({ name, ...(given.get(name) ?? { jobsDone: 0, attemptsFailed: 0, cpuMs: 0 }) });
  const figures = (rows: typeof whole) => rows.map((w) => ({ name: w.name, jobsDone: w.jobsDone, attemptsFailed: w.attemptsFailed, cpuMs: w.cpuMs }));
  expect(figures(whole)).toEqual(["light", "busy", "middling", "op"].map(expected));

  // two rows a page: each page's rows are read for themselves, not from the page's first worker
  const first = await farm.t.query(api.console.workers, { apiKey: op.apiKey, paginationOpts: { numItems: 2, cursor: null } });
  const second = await farm.t.query(api.console.workers, { apiKey: op.apiKey, paginationOpts: { numItems: 2, cursor: first.continueCursor } });
  expect(figures(first.page)).toEqual(["light", "busy"].map(expected));
  expect(figures(second.page)).toEqual(["middling", "op"].map(expected));
});
