// The loopback server's convex-test with the per-table scan (test/server/tableScan.ts) answers exactly as the
// stock convex-test: the same documents in the same order, the same pages and cursors, through inserts,
// patches, deletes, re-inserts, a transaction's own pending writes and a rolled-back transaction.
import { anyApi, type GenericMutationCtx, type PaginationOptions, type PaginationResult } from "convex/server";
import { convexTest as stockConvexTest } from "convex-test";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DataModel, Id } from "../server/fixture/convex/_generated/dataModel";
import { fixtureConvexDir, modulesFromDirectory, schemaFromDirectory } from "../server/index";
import { ANCHORS, installedConvexTest, loadConvexTest, patchTableScan, writePatchedConvexTest } from "../server/tableScan";

type Ctx = GenericMutationCtx<DataModel>;
type ConvexTest = typeof stockConvexTest;

/** Every read a query can make but pages: index ranges both ways, table scans, first/take/unique, a filter. */
async function readEverything(ctx: Ctx): Promise<unknown[]> {
  const answers: unknown[] = [];
  answers.push(await ctx.db.query("items").collect());
  answers.push(await ctx.db.query("items").order("desc").take(7));
  answers.push(await ctx.db.query("messages").first());
  answers.push(await ctx.db.query("ticks").order("desc").collect());
  answers.push(
    await ctx.db
      .query("items")
      .withIndex("by_group_rank", (q) => q.eq("group", "b").gt("rank", 3).lte("rank", 10))
      .order("desc")
      .collect(),
  );
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "a")).take(3));
  // a few rows from a bound on a later field, or past a whole first-field value, both ways (the sorted index's cut)
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "a").gt("rank", 3)).first());
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "b").lte("rank", 6)).order("desc").take(2));
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.gt("group", "a")).first());
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.lt("group", "c")).order("desc").take(3));
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.gte("group", "b").lt("group", "c")).take(2));
  answers.push(await ctx.db.query("items").withIndex("by_group_rank").order("desc").first());
  answers.push(await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "c").eq("rank", 2)).collect());
  answers.push(await ctx.db.query("messages").withIndex("by_author", (q) => q.eq("author", "ann")).unique().catch((e: Error) => e.message));
  answers.push(
    await ctx.db
      .query("messages")
      .filter((q) => q.eq(q.field("body"), "hello 4"))
      .collect(),
  );
  for (const key of ["x", 1, 1n, { a: 1 }, [1, 2], null, undefined, true]) {
    answers.push(await ctx.db.query("tags").withIndex("by_key", (q) => q.eq("key", key)).collect());
  }
  answers.push(await ctx.db.query("tags").withIndex("by_key", (q) => q.gt("key", 0)).collect());
  return answers;
}

/** Every page of an index range and of a table scan, one transaction per page (as a deployment allows). */
async function readPages(t: ReturnType<ConvexTest>): Promise<unknown[]> {
  const pages: unknown[] = [];
  const pageOf: Array<(ctx: Ctx, page: PaginationOptions) => Promise<PaginationResult<unknown>>> = [
    (ctx, page) => ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "a")).paginate(page),
    (ctx, page) => ctx.db.query("messages").order("desc").paginate(page),
  ];
  for (const query of pageOf) {
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const result = await t.run((ctx: Ctx) => query(ctx, { numItems: 4, cursor }));
      pages.push(result);
      if (result.isDone) break;
      cursor = result.continueCursor;
    }
  }
  return pages;
}

/** One scripted history; returns every answer read along the way. */
async function history(convexTest: ConvexTest): Promise<unknown[]> {
  const schema = await schemaFromDirectory(fixtureConvexDir);
  const t = convexTest({ schema, modules: modulesFromDirectory(fixtureConvexDir) });
  const answers: unknown[] = [];
  const read = async () => answers.push(await t.run(readEverything), await readPages(t));

  await read(); // empty tables
  const items = await t.run(async (ctx: Ctx) => {
    const ids: Array<Id<"items">> = [];
    for (let i = 0; i < 45; i++) ids.push(await ctx.db.insert("items", { group: "abc"[i % 3], rank: i % 11 }));
    for (let i = 0; i < 12; i++) await ctx.db.insert("messages", { author: ["ann", "bob", "cy"][i % 3], body: `hello ${i % 5}` });
    for (let i = 0; i < 5; i++) await ctx.db.insert("ticks", { at: i });
    for (const [i, key] of ["x", 1, 1n, { a: 1 }, [1, 2], null, undefined, true, 1, { a: 1 }, "x"].entries()) {
      await ctx.db.insert("tags", { key, note: `tag ${i}` });
    }
    return ids;
  });
  await read();

  await t.run(async (ctx: Ctx) => {
    for (const [k, id] of items.entries()) {
      if (k % 4 === 0) await ctx.db.delete(id);
      else if (k % 5 === 0) await ctx.db.patch(id, { rank: 100 - k });
      else if (k % 7 === 0) await ctx.db.replace(id, { group: "b", rank: 5 });
    }
    // tags move between first-field values: a number to an object, an object to a string, a value to none
    for (const [k, tag] of (await ctx.db.query("tags").collect()).entries()) {
      if (k % 3 === 0) await ctx.db.patch(tag._id, { key: { a: 1 } });
      else if (k % 3 === 1) await ctx.db.patch(tag._id, { key: "x" });
      else if (k === 5) await ctx.db.patch(tag._id, { key: undefined });
    }
  });
  await read();

  // Re-insert what was deleted (new ids), and read inside the same transaction: its own writes count.
  answers.push(
    await t.run(async (ctx: Ctx) => {
      for (const [k] of items.entries()) if (k % 4 === 0) await ctx.db.insert("items", { group: "abc"[k % 3], rank: k % 11 });
      // the first rows of ranges move out of them (or go) in this transaction: a limited read looks past them
      const firstOfA = await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "a")).take(2);
      await ctx.db.patch(firstOfA[0]._id, { group: "c" });
      await ctx.db.delete(firstOfA[1]._id);
      const lastOfB = await ctx.db.query("items").withIndex("by_group_rank", (q) => q.eq("group", "b")).order("desc").first();
      await ctx.db.patch(lastOfB!._id, { rank: -1 });
      const messages = await ctx.db.query("messages").collect();
      await ctx.db.delete(messages[0]._id);
      await ctx.db.insert("messages", { author: "ann", body: "hello 4" });
      return readEverything(ctx);
    }),
  );
  await read();

  // A transaction that throws leaves nothing behind.
  await expect(
    t.run(async (ctx: Ctx) => {
      await ctx.db.insert("items", { group: "a", rank: 1 });
      await ctx.db.delete(items[1]);
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  await read();

  // Through the app's own functions, too.
  await t.mutation(anyApi.items.add, { group: "c", rank: 2 });
  answers.push(await t.query(anyApi.items.inGroup, { group: "c" }));
  await read();
  return answers;
}

describe("the loopback server's per-table scan", () => {
  beforeEach(() => {
    // Every document's _creationTime is then the same in both runs.
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2025-01-01T00:00:00Z") });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers every read exactly as stock convex-test does", async () => {
    // One after the other: each convex-test copy points the global Convex object at itself when first used.
    const stock = await history(stockConvexTest);
    const patched = await history((await loadConvexTest()).convexTest);
    expect(patched).toEqual(stock);
    // The history reads real data: pages, deletes and re-inserts all show.
    expect(JSON.stringify(stock, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value)).length).toBeGreaterThan(20_000);
    // (after the first inserts: every item; at the end: the app's own query of group c)
    expect((stock[2] as unknown[][])[0]).toHaveLength(45);
    expect(stock.at(-3)).toContain(2);
  });

  it("loads a copy that really scans per table", () => {
    const text = readFileSync(writePatchedConvexTest(), "utf8");
    expect(text).toContain("this.__tableIds?.get(tableName)");
    expect(text).not.toContain("Object.keys(this._documents).filter(isInTable)");
  });
});

describe("the five places of convex-test the patch rewrites", () => {
  const { entry, version } = installedConvexTest();
  const source = readFileSync(entry, "utf8");
  const refusal = (...names: string[]) =>
    `The loopback server's per-table scan does not apply to convex-test ${version}: ${names.join(", ")} changed. ` +
    "Update test/server/tableScan.ts for this version.";
  /** What an upgrade does to code it did not otherwise change: indented anew, or quoted the other way. */
  const reformatted = (text: string) => (text.includes("    ") ? text.replaceAll("    ", "  ") : text.replaceAll('"', "'"));

  it.each(ANCHORS.map((anchor) => [anchor.name, anchor] as const))("%s is in the installed convex-test exactly once", (name, anchor) => {
    expect(source.split(anchor.text).length - 1, `${name} in convex-test ${version}`).toBe(1);
  });

  it.each(ANCHORS.map((anchor) => [anchor.name, anchor] as const))("an upgrade that changes or repeats %s stops the patch, naming it", (name, anchor) => {
    const changed = source.replace(anchor.text, reformatted(anchor.text));
    expect(changed).not.toContain(anchor.text);
    expect(() => patchTableScan(changed, version, "file:///m.js")).toThrow(refusal(name));
    const repeated = source.replace(anchor.text, `${anchor.text}\n${anchor.text}`);
    expect(() => patchTableScan(repeated, version, "file:///m.js")).toThrow(refusal(name));
  });

  it("names every anchor that changed, and patches the installed version", () => {
    const [first, , third] = ANCHORS;
    const changed = source.replace(first.text, reformatted(first.text)).replace(third.text, reformatted(third.text));
    expect(() => patchTableScan(changed, version, "file:///m.js")).toThrow(refusal(first.name, third.name));
    const patched = patchTableScan(source, version, "file:///m.js");
    for (const anchor of ANCHORS) expect(patched, anchor.name).toContain(anchor.patched("file:///m.js"));
  });
});
