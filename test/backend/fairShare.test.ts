// The order across submitters (convex/queue/fairShare.ts, fairRound.ts): priority first; inside a priority level
// client keys share by weight, and inside a key its fairness keys; FIFO inside one; idle keys bank nothing.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { addKey, dispatchAll, finishOffers, newIndexedFarm, offeredTo, ownersOf, setLimits, submitMany, takeOneByOne, tally, waitingWorkers } from "./fairFarm";
import { enrollWorker } from "./setup";
import { checkConsistency } from "./sweep/consistency";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("two client keys", () => {
  test("of weight 1 alternate, the older job first on a tie — through the dispatcher and through claims of lane heads", async () => {
    const farm = await newIndexedFarm();
    const a = await addKey(farm, "a");
    const b = await addKey(farm, "b");
    await submitMany(farm, a, 6);
    await submitMany(farm, b, 6);
    const workers = await waitingWorkers(farm, 8);
    await dispatchAll(farm);
    expect(await ownersOf(farm, [a, b], await offeredTo(farm, workers))).toEqual(["a", "b", "a", "b", "a", "b", "a", "b"]);
    // the 4 jobs left go out alternating too, to a worker that takes lane heads itself
    const simple = await enrollWorker(farm, { name: "simple", maxConcurrentJobs: 1 });
    expect(await ownersOf(farm, [a, b], await takeOneByOne(farm, simple, 4))).toEqual(["a", "b", "a", "b"]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("one key behind another's deep queue is served beside it, not after it", async () => {
    const farm = await newIndexedFarm();
    const a = await addKey(farm, "a");
    const b = await addKey(farm, "b");
    await submitMany(farm, a, 200);
    await submitMany(farm, b, 3);
    const worker = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    expect(await ownersOf(farm, [a, b], await takeOneByOne(farm, worker, 6))).toEqual(["a", "b", "a", "b", "a", "b"]);
  });

  test("a farm with one client key is plain priority-then-FIFO, and writes no pass", async () => {
    const farm = await newIndexedFarm();
    const only = await addKey(farm, "only");
    const low = await submitMany(farm, only, 3);
    const high = await submitMany(farm, only, 2, { priority: 5 });
    const worker = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    expect(await takeOneByOne(farm, worker, 5)).toEqual([...high, ...low]);
    expect(await farm.t.run(async (ctx) => [...(await ctx.db.query("fairPasses").collect()), ...(await ctx.db.query("fairClocks").collect())])).toEqual([]);
  });
});

describe("weights", () => {
  test("3:1 with both backlogged: 75/25 ± 2 % over 2,000 offers by the dispatcher", { timeout: 180_000 }, async () => {
    const farm = await newIndexedFarm();
    const a = await addKey(farm, "a");
    const b = await addKey(farm, "b");
    await setLimits(farm, a, { weight: 3 });
    await submitMany(farm, b, 520);
    await submitMany(farm, a, 1_520);
    // 2,000 free slots: 62 workers of 32 and one of 16
    const workers = [...(await waitingWorkers(farm, 62, 32)), ...(await waitingWorkers(farm, 1, 16))];
    await dispatchAll(farm);
    const offered = await offeredTo(farm, workers);
    expect(offered).toHaveLength(2_000);
    const share = tally(await ownersOf(farm, [a, b], offered));
    expect(Math.abs(share.a / 2_000 - 0.75)).toBeLessThanOrEqual(0.02);
    // the bound the docs state: at most one job ahead of its share, less than one per competing key behind it
    expect(share.a).toBeGreaterThanOrEqual(1_500 - 2);
    expect(share.a).toBeLessThanOrEqual(1_500 + 1);
  });
});

describe("idle keys", () => {
  test("a key that had nothing ready comes back at the virtual time: no burst for the turns it missed", async () => {
    const farm = await newIndexedFarm();
    const [a, b, c] = [await addKey(farm, "a"), await addKey(farm, "b"), await addKey(farm, "c")];
    const worker = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    await submitMany(farm, a, 10);
    await submitMany(farm, b, 10);
    // a and b share 20 turns; b's last
    expect(tally(await ownersOf(farm, [a, b, c], await takeOneByOne(farm, worker, 20)))).toEqual({ a: 10, b: 10 });
    // while b has nothing ready, a and c take 60 turns between them
    await submitMany(farm, a, 100);
    await submitMany(farm, c, 100);
    expect(tally(await ownersOf(farm, [a, b, c], await takeOneByOne(farm, worker, 60)))).toEqual({ a: 30, c: 30 });
    // b comes back: one turn in three, not the 30 it "missed"
    await submitMany(farm, b, 100);
    const next = tally(await ownersOf(farm, [a, b, c], await takeOneByOne(farm, worker, 30)));
    expect(next.b).toBeGreaterThanOrEqual(9);
    expect(next.b).toBeLessThanOrEqual(11);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("fairness keys", () => {
  test("nest inside their client key: the key's share is split between them, the other key's is not", async () => {
    const farm = await newIndexedFarm();
    const [app, ci] = [await addKey(farm, "app"), await addKey(farm, "ci")];
    for (const user of ["u1", "u2", "u3"]) await submitMany(farm, app, 20, { fairnessKey: user });
    await submitMany(farm, ci, 60);
    const worker = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    const got = tally(await ownersOf(farm, [app, ci], await takeOneByOne(farm, worker, 60)));
    expect(got).toEqual({ ci: 30, "app/u1": 10, "app/u2": 10, "app/u3": 10 });
  });

  test("with weights set for some, the others keep weight 1", async () => {
    const farm = await newIndexedFarm();
    const app = await addKey(farm, "app");
    await setLimits(farm, app, { fairnessWeights: [{ fairnessKey: "gold", weight: 2 }] });
    for (const user of ["gold", "u1", "u2"]) await submitMany(farm, app, 40, { fairnessKey: user });
    const worker = await enrollWorker(farm, { maxConcurrentJobs: 1 });
    const got = tally(await ownersOf(farm, [app], await takeOneByOne(farm, worker, 40)));
    expect(got).toEqual({ "app/gold": 20, "app/u1": 10, "app/u2": 10 });
  });

  test("one fairness key's jobs stay in FIFO order, in one dispatcher round and claim by claim", async () => {
    const farm = await newIndexedFarm();
    const app = await addKey(farm, "app");
    const first = await submitMany(farm, app, 3, { fairnessKey: "u1" });
    await submitMany(farm, app, 3, { fairnessKey: "u2" });
    const second = await submitMany(farm, app, 3, { fairnessKey: "u1" });
    const u1Of = async (ids: Id<"jobs">[]) => (await ownersOf(farm, [app], ids)).flatMap((owner, i) => (owner === "app/u1" ? [ids[i]] : []));
    const workers = await waitingWorkers(farm, 6);
    await dispatchAll(farm);
    const offered = await offeredTo(farm, workers);
    expect(await ownersOf(farm, [app], offered)).toEqual(["app/u1", "app/u2", "app/u1", "app/u2", "app/u1", "app/u2"]);
    expect(await u1Of(offered)).toEqual(first);
    const simple = await enrollWorker(farm, { name: "simple", maxConcurrentJobs: 1 });
    expect(await takeOneByOne(farm, simple, 3)).toEqual(second);
  });
});

describe("priority", () => {
  test("still wins across keys, in one lane and across lanes: a heavier key's lower priority waits for a lighter key's higher one", async () => {
    const farm = await newIndexedFarm();
    const [heavy, light] = [await addKey(farm, "heavy"), await addKey(farm, "light")];
    await setLimits(farm, heavy, { weight: 1000 });
    await submitMany(farm, heavy, 3, { type: "a.job" });
    await submitMany(farm, heavy, 3, { type: "b.job" });
    const urgent = [...(await submitMany(farm, light, 2, { priority: 7, type: "a.job" })), ...(await submitMany(farm, light, 2, { priority: 7, type: "b.job" }))];
    const workers = await waitingWorkers(farm, 4);
    await dispatchAll(farm);
    expect(new Set(await offeredTo(farm, workers))).toEqual(new Set(urgent));
    await finishOffers(farm, workers, 1);
    await dispatchAll(farm);
    expect(await ownersOf(farm, [heavy, light], await offeredTo(farm, workers))).toEqual(["heavy", "heavy", "heavy", "heavy"]);
  });
});
