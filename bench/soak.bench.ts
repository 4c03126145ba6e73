// The long soak, kept out of `npm run bench` (it takes about seven minutes): run it with `npm run bench:soak`.
// An idle farm for longer than the presence period (one presence call per worker per TIMING.presenceEveryMs,
// nothing else), and the saturated farm on stock convex-test, whose every query walks the whole database
// (for reference next to bench/contention.bench.ts, which serves only the queried table).
import { describe, it } from "vitest";
import { TIMING } from "../convex/core/limits";
import { engine } from "./fanout/engines";
import { farmhandSaturated, seedStyleSaturated } from "./fanout/saturated";
import { ServerProcess } from "./fanout/serverProcess";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/soak.bench.ts", "bench/fanout", "bench/seedStyle", "convex", "extension/worker", "test/server"];

const figures: Record<string, Figure> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

describe.skipIf(!process.env.BENCH_SOAK)("soak (BENCH_SOAK=1, `npm run bench:soak`)", () => {
  it("idle: one presence call per worker per presence period, nothing else; the stock server for reference meanwhile", async () => {
    const WORKERS = 50;
    const server = await ServerProcess.start(["--seed", String(WORKERS)]);
    const engines = server.seeded.workerKeys!.map((key) => engine(server.url, key, { real: false }));
    try {
      for (let i = 0; i < engines.length; i += 20) await Promise.all(engines.slice(i, i + 20).map((e) => e.worker.start()));
      const deadline = Date.now() + 60_000;
      while (((await server.stats()).functions["workers:claim"]?.calls ?? 0) < WORKERS) {
        if (Date.now() > deadline) throw new Error("idle engines not waiting within 60 s");
        await sleep(100);
      }
      await sleep(2_000);
      await server.resetStats();
      const startedAt = performance.now();
      // the stock-server reference runs during the idle window, on servers of its own
      const options = { queue: 3_000, windowMs: 15_000, stockScan: true };
      const ours = await farmhandSaturated(options);
      const seed = await seedStyleSaturated(options);
      figures.saturated_throughput_stock_test_server = { value: round(ours.jobsPerSecond), unit: "jobs/s (every query walks the whole database)" };
      figures.saturated_throughput_stock_test_server_seed_style = { value: round(seed.jobsPerSecond), unit: "jobs/s (every query walks the whole database)" };
      figures.saturated_claim_conflicts_stock_test_server = { value: round((ours.claimConflicts / Math.max(1, ours.claims)) * 100, 2), unit: `% of ${ours.claims} claims` };

      await sleep(Math.max(0, startedAt + TIMING.presenceEveryMs + 10_000 - performance.now()));
      const stats = await server.stats();
      const minutes = (performance.now() - startedAt) / 60_000;
      const presence = stats.functions["workers:presence"]?.calls ?? 0;
      const perWorkerPerPeriod = presence / WORKERS / ((minutes * 60_000) / TIMING.presenceEveryMs);
      const period = `${TIMING.presenceEveryMs / 60_000} min`;
      figures[`idle_presence_calls_per_worker_per_${period.replace(" ", "")}`] = {
        value: round(perWorkerPerPeriod, 2),
        unit: `calls (${WORKERS} idle engines, ${round(minutes, 1)} min)`,
        target: "≤ 1",
        pass: perWorkerPerPeriod <= 1 && presence > 0,
      };
      const otherWorkerCalls = Object.entries(stats.functions)
        .filter(([name]) => name.startsWith("workers:") && name !== "workers:presence")
        .reduce((s, [, f]) => s + f.calls, 0);
      figures.idle_other_worker_calls = { value: otherWorkerCalls, unit: "calls (anything but presence, doorbell re-runs included)", target: "0", pass: otherWorkerCalls === 0 };
      const serverRuns = Object.entries(stats.functions).filter(([name]) => !name.startsWith("workers:")).reduce((s, [, f]) => s + f.calls, 0);
      const allowed = Math.ceil((minutes * 60_000) / TIMING.summaryPresenceDelayMs);
      figures.idle_summary_refreshes = {
        value: serverRuns,
        unit: `runs (the presence calls' summary refreshes, farm-wide, in ${round(minutes, 1)} min)`,
        target: `≤ 1 per ${TIMING.summaryPresenceDelayMs / 1000} s (${allowed})`,
        pass: serverRuns <= allowed,
      };
      saveFigures("soak", figures, MEASURES);
    } finally {
      for (let i = 0; i < engines.length; i += 20) await Promise.all(engines.slice(i, i + 20).map((e) => e.close()));
      server.close();
    }
  });
});
