import { test } from "vitest";
import { api, internal } from "../convex/_generated/api";
import { measure, type Usage } from "../test/backend/metrics";
import { seedPending } from "../test/backend/seed";
import { enrollWorker, newFarm } from "../test/backend/setup";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/claim.bench.ts", "convex", "test/backend/metrics.ts", "test/backend/seed.ts"];

/**
 * Documents read and written by one workers:claim, farm:overview and the summariser it reads, counted by
 * convex-test's transaction-limit accounting (transaction limits on), at growing queue depths.
 */
type Scenario = { name: string; runnable: number; blockedAhead?: number; delayedAhead?: number; max?: number };

const SCENARIOS: Scenario[] = [
  { name: "depth 100", runnable: 100 },
  { name: "depth 10000", runnable: 10_000 },
  { name: "depth 50000", runnable: 50_000 },
  { name: "10000 blocked ahead", runnable: 1, blockedAhead: 10_000 },
  { name: "10000 delayed ahead", runnable: 1, delayedAhead: 10_000 },
  { name: "depth 50000, max 8", runnable: 50_000, max: 8 },
];

type Row = { scenario: string; claim: Usage; overview: Usage; summariser: Usage; claimed: number };

async function runScenario(s: Scenario): Promise<Row> {
  const farm = await newFarm();
  const max = s.max ?? 1;
  const worker = await enrollWorker(farm, { capabilities: ["cpu"], maxConcurrentJobs: max });
  const hour = 60 * 60 * 1000;
  if (s.blockedAhead) {
    await seedPending(farm, s.blockedAhead, { requiredCapabilities: ["cuda"], priority: 100, startAt: Date.now() - hour });
  }
  if (s.delayedAhead) await seedPending(farm, s.delayedAhead, { priority: 100, delayedUntil: Date.now() + hour });
  await seedPending(farm, s.runnable, { requiredCapabilities: ["cpu"] });
  const summariser = await measure(farm.t, "mutation", internal.summary.refresh, { orgId: farm.orgId, all: true });
  const overview = await measure(farm.t, "query", api.farm.overview, { apiKey: worker.apiKey });
  const claim = await measure(farm.t, "mutation", api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities, max });
  const seeded = s.runnable + (s.blockedAhead ?? 0) + (s.delayedAhead ?? 0);
  if (overview.result.counts.pending !== seeded) {
    throw new Error(`${s.name}: overview counts ${overview.result.counts.pending} pending, seeded ${seeded}`);
  }
  if (claim.result.length !== max) throw new Error(`${s.name}: expected to claim ${max} jobs, got ${claim.result.length}`);
  return { scenario: s.name, claim: claim.usage, overview: overview.usage, summariser: summariser.usage, claimed: claim.result.length };
}

test("documents read by claim and overview stay flat with queue depth", async () => {
  const rows: Row[] = [];
  for (const s of SCENARIOS) rows.push(await runScenario(s));

  console.log("\nscenario               claimed  claim reads  claim writes  overview reads  summariser reads");
  for (const r of rows) {
    console.log(
      `${r.scenario.padEnd(22)} ${String(r.claimed).padStart(7)}  ${String(r.claim.documentsRead).padStart(11)}  ${String(r.claim.documentsWritten).padStart(12)}` +
        `  ${String(r.overview.documentsRead).padStart(14)}  ${String(r.summariser.documentsRead).padStart(16)}`,
    );
  }

  const figures: Record<string, Figure> = {};
  for (const r of rows) {
    const key = r.scenario.replace(/\s+/g, "_");
    figures[`claim_reads_${key}`] = { value: r.claim.documentsRead, unit: "documents", target: "< 100", pass: r.claim.documentsRead < 100 };
    figures[`claim_writes_${key}`] = {
      value: r.claim.documentsWritten,
      unit: "documents",
      target: "≤ 2 per claimed job (job + its audit event) + 5 (counter change, queue-wait change, running count, summary kick, presence ≤ 1/min)",
      pass: r.claim.documentsWritten <= 2 * r.claimed + 5,
    };
    figures[`overview_reads_${key}`] = { value: r.overview.documentsRead, unit: "documents", target: "≤ 5 (one summary row)", pass: r.overview.documentsRead <= 5 };
    figures[`summariser_reads_${key}`] = { value: r.summariser.documentsRead, unit: "documents", target: "< 200", pass: r.summariser.documentsRead < 200 };
  }
  const claimReads = rows.filter((r) => r.claimed === 1).map((r) => r.claim.documentsRead);
  figures.claim_reads_spread = {
    value: Math.max(...claimReads) - Math.min(...claimReads),
    unit: "documents (max − min over the one-job scenarios)",
    target: "flat: ≤ 5",
    pass: Math.max(...claimReads) - Math.min(...claimReads) <= 5,
  };
  saveFigures("backend", figures, MEASURES);
});
