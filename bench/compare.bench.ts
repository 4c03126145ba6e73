import { test } from "vitest";
import { farmhandDesign, seedStyleDesign, type Design, type DryClaim } from "./compare/designs";
import { CLIENTS, mixedQueue } from "./compare/mix";
import { installReadRecorder } from "./compare/readRecorder";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/compare.bench.ts", "bench/compare", "bench/seedStyle", "convex"];

/**
 * Seed-style queue (one global "is there work" flag, claim = first pending job, capabilities filtered in
 * code) versus Farmhand's workers:claim, side by side in one process: 8 clients claim in rounds on the
 * same 10,000-deep mixed-capability queue. Each round, every client's claim is first run against the
 * round's starting state and rolled back (as if all 8 ran at the same instant) to count the documents it
 * reads and which job documents; then the clients claim and finish for real, one after another. Farmhand's
 * clients work as its engine does: they wait, the dispatcher offers them the heads between rounds, and each
 * claim takes the client's own offer (the dispatcher's reads are not claims and are not counted here).
 */
const DEPTH = 10_000;
// convex-test sorts a whole table for every indexed query, so each claim on a 10,000-deep queue costs
// 0.1–0.3 s here; 12 rounds (96 claims per design) keep the run near a minute.
const ROUNDS = 12;
const QUEUE_SEED = 6;

type Tally = {
  reads: number[];
  empty: number; // claims that found no job at all
  lost: number; // claims that picked a job another claim of the same round also picked
  readOverlapPairs: number; // pairs of claims in one round that read a common job document
  claimed: number;
};

function tallyRound(tally: Tally, round: DryClaim[]) {
  const picked = new Set<string>();
  for (const claim of round) {
    tally.reads.push(claim.documentsRead);
    if (claim.picked === null) tally.empty++;
    else if (picked.has(claim.picked)) tally.lost++;
    else picked.add(claim.picked);
  }
  for (let i = 0; i < round.length; i++) {
    for (let j = i + 1; j < round.length; j++) {
      if ([...round[i].jobDocs].some((id) => round[j].jobDocs.has(id))) tally.readOverlapPairs++;
    }
  }
}

async function measure(design: Design, queue: string[][]): Promise<Tally> {
  await design.fill(queue);
  installReadRecorder();
  const tally: Tally = { reads: [], empty: 0, lost: 0, readOverlapPairs: 0, claimed: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    const round: DryClaim[] = [];
    for (let client = 0; client < CLIENTS.length; client++) round.push(await design.dryClaim(client));
    tallyRound(tally, round);
    tally.claimed += await design.commitRound();
  }
  return tally;
}

const avg = (xs: number[]) => Math.round((xs.reduce((s, x) => s + x, 0) / xs.length) * 10) / 10;
const claims = ROUNDS * CLIENTS.length;
const pairsPerRound = (CLIENTS.length * (CLIENTS.length - 1)) / 2;

test("seed-style claim vs Farmhand claim: 8 clients, 10,000-deep mixed-capability queue", async () => {
  const queue = mixedQueue(DEPTH, QUEUE_SEED);
  const seed = await measure(seedStyleDesign(), queue);
  const farmhand = await measure(await farmhandDesign(), queue);
  const first = (t: Tally) => t.reads.slice(0, CLIENTS.length);
  const last = (t: Tally) => t.reads.slice(-CLIENTS.length);

  const rows: Array<[string, (t: Tally) => number | string]> = [
    ["claims measured", () => claims],
    ["jobs claimed for real", (t) => t.claimed],
    ["docs read per claim, average", (t) => avg(t.reads)],
    ["docs read per claim, max", (t) => Math.max(...t.reads)],
    ["docs read per claim, first round avg", (t) => avg(first(t))],
    ["docs read per claim, last round avg", (t) => avg(last(t))],
    ["claims that found no job", (t) => t.empty],
    ["claims that lost the same job to another", (t) => t.lost],
    ["found nothing (no job + lost)", (t) => t.empty + t.lost],
    [`read-overlap pairs (of ${pairsPerRound}/round), total`, (t) => t.readOverlapPairs],
    ["read-overlap pairs per round", (t) => avg([t.readOverlapPairs / ROUNDS])],
  ];
  console.log(`\n${"".padEnd(44)} ${"seed-style".padStart(12)} ${"farmhand".padStart(12)}`);
  for (const [label, get] of rows) {
    console.log(`${label.padEnd(44)} ${String(get(seed)).padStart(12)} ${String(get(farmhand)).padStart(12)}`);
  }

  const figures: Record<string, Figure> = {
    seed_claim_reads_avg: { value: avg(seed.reads), unit: "documents" },
    seed_claim_reads_max: { value: Math.max(...seed.reads), unit: "documents" },
    farmhand_claim_reads_avg: { value: avg(farmhand.reads), unit: "documents", target: "< 100", pass: avg(farmhand.reads) < 100 },
    farmhand_claim_reads_max: { value: Math.max(...farmhand.reads), unit: "documents", target: "< 100", pass: Math.max(...farmhand.reads) < 100 },
    seed_claim_reads_growth: {
      value: Math.round((avg(last(seed)) - avg(first(seed))) * 10) / 10,
      unit: `documents (last round avg − first round avg, over ${ROUNDS} rounds)`,
    },
    farmhand_claim_reads_growth: {
      value: Math.round((avg(last(farmhand)) - avg(first(farmhand))) * 10) / 10,
      unit: `documents (last round avg − first round avg, over ${ROUNDS} rounds)`,
      target: "flat: ≤ 5",
      pass: avg(last(farmhand)) - avg(first(farmhand)) <= 5,
    },
    seed_found_nothing: { value: seed.empty + seed.lost, unit: `of ${claims} claims` },
    farmhand_found_nothing: {
      value: farmhand.empty + farmhand.lost,
      unit: `of ${claims} claims`,
      target: `< seed-style (${seed.empty + seed.lost})`,
      pass: farmhand.empty + farmhand.lost < seed.empty + seed.lost,
    },
    seed_same_job_collisions: { value: seed.lost, unit: `of ${claims} claims` },
    farmhand_same_job_collisions: {
      value: farmhand.lost,
      unit: `of ${claims} claims`,
      target: `< seed-style (${seed.lost})`,
      pass: farmhand.lost < seed.lost,
    },
    seed_read_overlap_pairs_per_round: { value: avg([seed.readOverlapPairs / ROUNDS]), unit: `pairs of ${pairsPerRound}` },
    farmhand_read_overlap_pairs_per_round: {
      value: avg([farmhand.readOverlapPairs / ROUNDS]),
      unit: `pairs of ${pairsPerRound}`,
      target: `< seed-style (${avg([seed.readOverlapPairs / ROUNDS])})`,
      pass: farmhand.readOverlapPairs < seed.readOverlapPairs,
    },
  };
  saveFigures("compare", figures, MEASURES);
});
