// What a dispatcher round costs with many fairness keys (convex/queue/fairQueue.ts, fairRound.ts): it reads each
// flow's head and the jobs it hands out, never the queue behind them. Ten times the jobs behind the same 100 fairness
// keys: the same documents read, and the same work for the loopback server's convex-test (test/server/tableScan.ts),
// whose index reads look only at the rows inside a range — and only the first few when a query asks for a few.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { loadConvexTest } from "../server/tableScan";
import { addKey, newIndexedFarm, waitingWorkers, type Key } from "./fairFarm";
import { measure } from "./metrics";
import type { Farm } from "./setup";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const FAIRNESS_KEYS_PER_KEY = 50;
const WORKERS = 40;

/** `perFlow` jobs for each of the key's fairness keys, round-robin over them, in batches of 250. */
async function submitRoundRobin(farm: Farm, key: Key, prefix: string, perFlow: number) {
  const n = perFlow * FAIRNESS_KEYS_PER_KEY;
  for (let done = 0; done < n; done += 250) {
    const jobs = Array.from({ length: Math.min(250, n - done) }, (_, i) => ({ type: "x", payload: { n: done + i }, fairnessKey: `${prefix}-${(done + i) % FAIRNESS_KEYS_PER_KEY}` }));
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: key.key, jobs });
    vi.setSystemTime(Date.now() + 1);
  }
}

/** Two client keys with 50 fairness keys each, `perFlow` jobs in each of the 100 flows, 40 waiting workers: one round. */
async function oneRound(perFlow: number) {
  const { candidatesRead } = await loadConvexTest();
  const farm = await newIndexedFarm();
  await submitRoundRobin(farm, await addKey(farm, "a"), "tenant", perFlow);
  await submitRoundRobin(farm, await addKey(farm, "b"), "user", perFlow);
  await waitingWorkers(farm, WORKERS);
  const state = (await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").first()))!;
  const before = candidatesRead();
  const round = await measure(farm.t, "mutation", internal.dispatch.run, { orgId: farm.orgId, generation: state.generation });
  return { offered: round.result.offered, documentsRead: round.usage.documentsRead, candidatesRead: candidatesRead() - before };
}

test("a dispatcher round over 100 fairness keys reads as much with 3,000 jobs behind them as with 300", { timeout: 120_000 }, async () => {
  const small = await oneRound(3);
  const big = await oneRound(30);
  expect(small.offered).toBe(32);
  expect(big.offered).toBe(32);
  // each flow's head, each offer's waiter and inbox rows, the passes: nothing per job queued behind the heads
  expect(big.documentsRead).toBe(small.documentsRead);
  expect(big.documentsRead).toBeLessThan(100 + 32 * 6 + 50);
  // the loopback server's share of it: each index read looks at the rows it returns (and the round's own writes)
  expect(big.candidatesRead).toBeLessThan(2 * big.documentsRead);
  expect(big.candidatesRead).toBeLessThan(small.candidatesRead + 100);
});
