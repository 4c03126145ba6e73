import { afterEach, test } from "vitest";
import { startFarm, stopFarm, type Farm } from "../test/engine/helpers";
import { cachedSweep, hitLatencies } from "../test/engine/cachedSweep";
import { saveFigures, type Figure } from "./results";

const MEASURES = ["bench/cache.bench.ts", "test/engine/cachedSweep.ts", "convex", "extension/worker", "test/server"];

/**
 * The result cache on the loopback server with two real engine workers: a sweep of 1,000 jobs, 500 distinct payloads
 * each submitted twice (shuffled, chunks of 100), with `cache` (the org trusts one worker's result: cacheUnvalidated)
 * and without; then 50 submits of cached payloads one at a time, submit → succeeded. demo.echo takes a millisecond, so
 * that sweep's wall time is the farm's own bookkeeping (a hit still ends through the same transition as a run): the
 * time a hit saves is the donors', measured on a second sweep of one-second demo.slow jobs (100 distinct, twice each).
 */
const DISTINCT = 500;
const HITS = 50;
const SLOW_DISTINCT = 100;

let farm: Farm | undefined;
afterEach(async () => {
  if (farm) await stopFarm(farm);
  farm = undefined;
});

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test("a 1,000-job sweep with 50 % repeats runs about 500 times with cache, 1,000 without; a hit ends in < 50 ms", async () => {
  const figures: Record<string, Figure> = {};
  farm = await startFarm(2, 4);
  const cached = await cachedSweep(farm, { distinct: DISTINCT, copies: 2, cache: true, workers: 2 });
  const hits = cached.rows.filter((r) => r.cachedFrom !== undefined).length;
  const latencies = await hitLatencies(farm, HITS, (i) => ({ text: `point ${i}` }));
  await stopFarm(farm);
  farm = await startFarm(2, 4);
  const uncached = await cachedSweep(farm, { distinct: DISTINCT, copies: 2, cache: false, workers: 2 });
  await stopFarm(farm);
  farm = await startFarm(2, 4, ["demo.slow"]);
  const slowCached = await cachedSweep(farm, { distinct: SLOW_DISTINCT, copies: 2, cache: true, workers: 2, slow: true });
  await stopFarm(farm);
  farm = await startFarm(2, 4, ["demo.slow"]);
  const slowUncached = await cachedSweep(farm, { distinct: SLOW_DISTINCT, copies: 2, cache: false, workers: 2, slow: true });
  const ok = (rows: typeof cached.rows) => rows.every((r) => r.status === "succeeded");
  figures.sweep_executions_cached = { value: cached.executions, unit: "donor runs of 1,000 jobs (500 distinct)", target: "500 ± 5 %, all succeeded", pass: Math.abs(cached.executions - DISTINCT) <= DISTINCT * 0.05 && ok(cached.rows) };
  figures.sweep_cache_hits = { value: hits, unit: "jobs answered without running (cachedFrom)", target: "1,000 − executions", pass: hits === 1_000 - cached.executions };
  figures.sweep_executions_uncached = { value: uncached.executions, unit: "donor runs of the same sweep without cache", target: "≥ 1,000, all succeeded", pass: uncached.executions >= 1_000 && ok(uncached.rows) };
  figures.sweep_wall_cached = { value: cached.wallMs, unit: "ms, submit of the first job to the end of the last" };
  figures.sweep_wall_uncached = { value: uncached.wallMs, unit: "ms, the same without cache" };
  figures.sweep_wall_ratio = { value: Math.round((cached.wallMs / uncached.wallMs) * 100) / 100, unit: "cached ÷ uncached wall time of the demo.echo sweep (1 ms jobs: the farm's bookkeeping, not the donors' time)" };
  figures.slow_sweep_executions_cached = { value: slowCached.executions, unit: `donor runs of ${SLOW_DISTINCT * 2} one-second jobs (${SLOW_DISTINCT} distinct)`, target: `${SLOW_DISTINCT} ± 5 %, all succeeded`, pass: Math.abs(slowCached.executions - SLOW_DISTINCT) <= SLOW_DISTINCT * 0.05 && ok(slowCached.rows) };
  figures.slow_sweep_wall_cached = { value: slowCached.wallMs, unit: "ms, the one-second sweep with cache" };
  figures.slow_sweep_wall_uncached = { value: slowUncached.wallMs, unit: "ms, the same without cache" };
  figures.slow_sweep_wall_ratio = { value: Math.round((slowCached.wallMs / slowUncached.wallMs) * 100) / 100, unit: "cached ÷ uncached wall time of the one-second sweep, same run", target: "< 0.8", pass: slowCached.wallMs / slowUncached.wallMs < 0.8 && ok(slowUncached.rows) };
  figures.hit_submit_to_succeeded_p50 = { value: Math.round(p50(latencies) * 10) / 10, unit: `ms, p50 of ${HITS} hits (submit, then one read)`, target: "< 50", pass: p50(latencies) < 50 };
  saveFigures("cache", figures, MEASURES);
}, 900_000);
