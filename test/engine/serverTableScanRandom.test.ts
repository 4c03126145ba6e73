// The loopback server's convex-test with the per-table scan (test/server/tableScan.ts) against the stock convex-test
// on random histories: from a seed, transactions of inserts, patches, replaces and deletes across four tables (the
// tags' index takes any value: strings, float64 and int64 numbers, booleans, null, absent, objects, arrays), reads of
// every kind between and after them, pages in transactions of their own, and transactions that roll back. Both run
// the same history; every answer must be the same. FARMHAND_SWEEP_SEED=<n> replays one seed.
import { type GenericMutationCtx, type PaginationResult } from "convex/server";
import { convexTest as stockConvexTest } from "convex-test";
import type { Value } from "convex/values";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DataModel, Doc, Id } from "../server/fixture/convex/_generated/dataModel";
import { fixtureConvexDir, modulesFromDirectory, schemaFromDirectory } from "../server/index";
import { loadConvexTest } from "../server/tableScan";
import { seededRng, sweepSeed, type Rng } from "../backend/sweep/prng";

type Ctx = GenericMutationCtx<DataModel>;
type ConvexTest = typeof stockConvexTest;
type Table = "items" | "messages" | "tags" | "ticks";
/** One answer of the history, and what was asked (named in a failure). */
type Answer = { what: string; value: unknown };

const START = Date.UTC(2025, 0, 1);
const TABLES: Table[] = ["items", "messages", "tags", "ticks"];
const GROUPS = ["a", "b", "c", "d"];
const AUTHORS = ["ann", "bob", "cy"];
const STEPS = 150;

/** A value for the tags' `key`, which takes anything: every kind the index orders, equal ones often. */
function anyKey(rng: Rng): Value | undefined {
  const kinds: Array<() => Value | undefined> = [
    () => rng.pick(["x", "y", ""]),
    () => rng.int(3),
    () => rng.int(3) + 0.5,
    () => BigInt(rng.int(3)),
    () => rng.chance(0.5),
    () => null,
    () => undefined,
    () => ({ a: rng.int(2) }),
    () => [rng.int(2)],
  ];
  return rng.pick(kinds)();
}

const rank = (rng: Rng) => (rng.chance(0.2) ? rng.int(12) + 0.25 : rng.int(12));

/** A random document of the table as the transaction sees it (null when it is empty). */
async function someDoc<T extends Table>(ctx: Ctx, rng: Rng, table: T): Promise<Doc<T> | null> {
  const rows: Array<Doc<T>> = await ctx.db.query(table).collect();
  return rows.length === 0 ? null : rng.pick(rows);
}

/** A key as the failure names it (int64 marked). */
const shown = (key: Value | undefined) => (key === undefined ? "(absent)" : JSON.stringify(key, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)));

/** One write; says what it did. */
async function write(ctx: Ctx, rng: Rng): Promise<string> {
  switch (rng.int(8)) {
    case 0:
    case 1:
      return `insert item ${await ctx.db.insert("items", { group: rng.pick(GROUPS), rank: rank(rng) })}`;
    case 2:
      return `insert message ${await ctx.db.insert("messages", { author: rng.pick(AUTHORS), body: `hello ${rng.int(4)}` })}`;
    case 3: {
      const key = anyKey(rng);
      return `insert tag ${await ctx.db.insert("tags", { ...(key === undefined ? {} : { key }), note: `n${rng.int(3)}` })}`;
    }
    case 4:
      return `insert tick ${await ctx.db.insert("ticks", { at: rng.int(50) })}`;
    case 5: {
      const item = await someDoc(ctx, rng, "items");
      if (!item) return "no item to patch";
      const change = rng.pick([{ group: rng.pick(GROUPS) }, { rank: rank(rng) }, { group: rng.pick(GROUPS), rank: rank(rng) }]);
      if (rng.chance(0.5)) await ctx.db.patch(item._id, change);
      else await ctx.db.replace(item._id, { group: item.group, rank: item.rank, ...change });
      return `change item ${item._id}`;
    }
    case 6: {
      const tag = await someDoc(ctx, rng, "tags");
      if (!tag) return "no tag to patch";
      await ctx.db.patch(tag._id, { key: anyKey(rng) });
      return `patch tag ${tag._id}`;
    }
    default: {
      const table = rng.pick(TABLES);
      const doc = await someDoc(ctx, rng, table);
      if (!doc) return `no ${table} to delete`;
      await ctx.db.delete(doc._id);
      return `delete ${doc._id}`;
    }
  }
}

/** One read of a random kind; its description and its answer. */
async function read(ctx: Ctx, rng: Rng): Promise<Answer> {
  const order = rng.pick(["asc", "desc"] as const);
  const take = 1 + rng.int(6);
  switch (rng.int(9)) {
    case 0: {
      const group = rng.pick(GROUPS);
      return { what: `items of ${group} (${order})`, value: await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", group)).order(order).collect() };
    }
    case 1: {
      const group = rng.pick(GROUPS);
      const r = rank(rng);
      return { what: `items of ${group} at rank ${r}`, value: await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", group).eq("rank", r)).collect() };
    }
    case 2: {
      const group = rng.pick(GROUPS);
      const [low, high] = [rng.int(12), rng.int(12)].sort((a, b) => a - b);
      const value = await ctx.db
        .query("items")
        .withIndex("by_group_rank", (q) => q.eq("group", group).gt("rank", low).lte("rank", high))
        .order(order)
        .take(take);
      return { what: `${take} items of ${group} in (${low}, ${high}] (${order})`, value };
    }
    case 3: {
      const from = rng.pick(GROUPS);
      return { what: `items from group ${from} on (${order})`, value: await ctx.db.query("items").withIndex("by_group_rank", (q) => q.gte("group", from)).order(order).take(take) };
    }
    case 4: {
      const author = rng.pick(AUTHORS);
      const unique = await ctx.db
        .query("messages")
        .withIndex("by_author", (q) => q.eq("author", author))
        .unique()
        .catch((e: Error) => e.message);
      return { what: `messages of ${author}, and the one`, value: [await ctx.db.query("messages").withIndex("by_author", (q) => q.eq("author", author)).order(order).collect(), unique] };
    }
    case 5: {
      const key = anyKey(rng);
      return { what: `tags with key ${shown(key)}`, value: await ctx.db.query("tags").withIndex("by_key", (q) => q.eq("key", key)).collect() };
    }
    case 6: {
      const key = anyKey(rng);
      const above = rng.chance(0.5);
      const value = await ctx.db
        .query("tags")
        .withIndex("by_key", (q) => (above ? q.gt("key", key) : q.lte("key", key)))
        .order(order)
        .collect();
      return { what: `tags with key ${above ? ">" : "<="} ${shown(key)}`, value };
    }
    case 7: {
      const since = START + rng.int(STEPS * 2);
      const table = rng.pick(TABLES);
      const value = await ctx.db
        .query(table)
        .withIndex("by_creation_time", (q) => q.gte("_creationTime", since))
        .order(order)
        .take(take);
      return { what: `${take} ${table} since ${since - START} ms (${order})`, value };
    }
    default: {
      const table = rng.pick(TABLES);
      const doc = await someDoc(ctx, rng, table);
      const body = `hello ${rng.int(4)}`;
      const filtered = await ctx.db
        .query("messages")
        .filter((q) => q.eq(q.field("body"), body))
        .order(order)
        .first();
      return { what: `a ${table} by id, and the first message saying ${body}`, value: [doc && (await ctx.db.get(doc._id as Id<Table>)), filtered] };
    }
  }
}

/** Every page of a random query, one transaction per page, as a deployment serves them. */
async function pages(t: ReturnType<ConvexTest>, rng: Rng): Promise<Answer> {
  const numItems = 1 + rng.int(5);
  const group = rng.pick(GROUPS);
  const author = rng.pick(AUTHORS);
  const which = rng.int(3);
  const results: Array<PaginationResult<unknown>> = [];
  let cursor: string | null = null;
  for (let page = 0; page < 60; page++) {
    const result: PaginationResult<unknown> = await t.run(async (ctx: Ctx) => {
      const paging = { numItems, cursor };
      if (which === 0) return await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", group)).paginate(paging);
      if (which === 1) return await ctx.db.query("messages").withIndex("by_author", (q) => q.eq("author", author)).order("desc").paginate(paging);
      return await ctx.db.query("tags").paginate(paging);
    });
    results.push(result);
    if (result.isDone) break;
    cursor = result.continueCursor;
  }
  return { what: `pages of ${numItems} (query ${which}, group ${group}, author ${author})`, value: results };
}

/** One random history from `seed`; every answer read along the way. */
async function history(convexTest: ConvexTest, seed: number): Promise<Answer[]> {
  const rng = seededRng(seed);
  vi.setSystemTime(START);
  const schema = await schemaFromDirectory(fixtureConvexDir);
  const t = convexTest({ schema, modules: modulesFromDirectory(fixtureConvexDir) });
  const answers: Answer[] = [];
  for (let step = 0; step < STEPS; step++) {
    // documents made in different milliseconds, and some in the same one
    vi.setSystemTime(Date.now() + rng.int(3));
    if (rng.chance(0.1)) {
      answers.push(await pages(t, rng));
      continue;
    }
    const rollBack = rng.chance(0.1);
    const inside = await t
      .run(async (ctx: Ctx) => {
        const seen: Answer[] = [];
        // more writes than reads early on, so the tables fill; then a mix (reads see the transaction's own writes)
        const ops = 1 + rng.int(6);
        for (let i = 0; i < ops; i++) {
          if (rng.chance(step < STEPS / 4 ? 0.8 : 0.5)) seen.push({ what: `step ${step}: ${await write(ctx, rng)}`, value: null });
          else seen.push(await read(ctx, rng));
        }
        if (rollBack) throw new Error(`rolled back: ${JSON.stringify(seen.length)}`);
        return seen;
      })
      .catch((e: Error) => [{ what: `step ${step}`, value: e.message }]);
    answers.push(...inside);
    if (rng.chance(0.3)) answers.push(await t.run((ctx: Ctx) => read(ctx, rng)));
  }
  // and at the end, every table whole
  for (const table of TABLES) answers.push({ what: `every ${table}`, value: await t.run((ctx: Ctx) => ctx.db.query(table).collect()) });
  return answers;
}

describe("the loopback server's per-table scan on random histories", () => {
  beforeEach(() => {
    // Every document's _creationTime is then the same in both runs.
    vi.useFakeTimers({ toFake: ["Date"], now: START });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const seeds = process.env.FARMHAND_SWEEP_SEED ? [sweepSeed(0)] : [1, 2, 3, 4, 5, 6];
  it(`seeds ${seeds.join(", ")}: every answer as stock convex-test gives it`, async () => {
    // Every stock history first: each convex-test copy points the global Convex object at itself when first used.
    const stock = [];
    for (const seed of seeds) stock.push(await history(stockConvexTest, seed));
    const { convexTest: patchedConvexTest } = await loadConvexTest();
    for (const [s, seed] of seeds.entries()) {
      const patched = await history(patchedConvexTest, seed);
      for (const [i, answer] of stock[s].entries()) expect(patched[i], `seed ${seed}, answer ${i}: ${answer.what}`).toEqual(answer);
      expect(patched).toHaveLength(stock[s].length);
      // a history with data in it: reads that found documents, and writes that moved them
      expect(stock[s].filter((a) => Array.isArray(a.value) && a.value.length > 0).length, `seed ${seed}: reads that found something`).toBeGreaterThan(20);
      expect(stock[s].filter((a) => a.what.includes("change item")).length, `seed ${seed}: items moved`).toBeGreaterThan(3);
    }
  });
});
