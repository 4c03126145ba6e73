// The loopback server's read sets: Convex's key order, index ranges, and which committed writes fall into
// what a transaction read (the rule behind subscription re-runs and the conflict audit).
import { convexToJson, type Value } from "convex/values";
import { describe, expect, it } from "vitest";
import { IndexCatalog, keyOf } from "../server/instruments/indexCatalog";
import { containsKey, rangeFromExpressions, type KeyRange } from "../server/instruments/keyRange";
import { ReadSet, type SyscallQuery } from "../server/instruments/readSet";
import { compareKeys, comparePrefix, compareValues } from "../server/instruments/valueOrder";
import { tableOfId, unknownVersion, type WriteRecord } from "../server/instruments/writes";

const catalog = new IndexCatalog();
catalog.declare("items", [{ name: "by_group_rank", fields: ["group", "rank"] }]);
catalog.declare("notes", []);

type Item = { _id: string; _creationTime: number; group: string; rank: number };
let nextId = 10_000;
const item = (group: string, rank: number): Item => ({ _id: `${nextId++}items`, _creationTime: nextId, group, rank });

const byGroup = (group: string, options: { order?: "asc" | "desc"; limit?: number } = {}): SyscallQuery => ({
  source: {
    type: "IndexRange",
    indexName: "items.by_group_rank",
    range: [{ type: "Eq", fieldPath: "group", value: group }],
    order: options.order ?? "asc",
  },
  operators: options.limit === undefined ? [] : [{ limit: options.limit }],
});

/** Feeds a stream the way convex-test answers `1.0/queryStreamNext`, ending with done when `exhausted`. */
function stream(reads: ReadSet, queryId: number, query: SyscallQuery, documents: Item[], exhausted: boolean): void {
  reads.startStream(queryId, query);
  for (const document of documents) reads.streamNext(queryId, JSON.stringify(convexToJson({ value: document, done: false })));
  if (exhausted) reads.streamNext(queryId, JSON.stringify({ value: null, done: true }));
}

const inserted = (document: Item): WriteRecord => ({ table: "items", id: document._id, before: null, after: catalog.project("items", document) });
const moved = (document: Item, rank: number): WriteRecord => ({
  table: "items",
  id: document._id,
  before: catalog.project("items", document),
  after: catalog.project("items", { ...document, rank }),
});

describe("Convex's value order on index keys", () => {
  it("orders types as Convex does: undefined < null < number < boolean < string < array", () => {
    const ascending: Array<Value | undefined> = [undefined, null, -1, 0, 2.5, false, true, "", "a", "b", [], [1]];
    for (let i = 0; i + 1 < ascending.length; i++) expect(compareValues(ascending[i], ascending[i + 1])).toBe(-1);
  });

  it("compares a key with a shorter prefix on the prefix's fields only", () => {
    expect(comparePrefix(["g", 1, 100, "id"], ["g"])).toBe(0);
    expect(comparePrefix(["g", 1, 100, "id"], ["g", 2])).toBe(-1);
    expect(comparePrefix(["h", 0], ["g", 9])).toBe(1);
    expect(comparePrefix(["g"], ["g", 1])).toBe(-1);
    expect(compareKeys(["g", 1], ["g", 1, 5])).toBeLessThan(0);
    expect(compareKeys(["g", 2], ["g", 1, 5])).toBeGreaterThan(0);
  });
});

describe("index ranges", () => {
  const inRange = (range: KeyRange, key: Array<Value | undefined>) => containsKey(range, key);

  it("eq on a prefix, then bounds on the next field, inclusive or not", () => {
    const range = rangeFromExpressions([
      { type: "Eq", fieldPath: "group", value: "g" },
      { type: "Gt", fieldPath: "rank", value: 1 },
      { type: "Lte", fieldPath: "rank", value: 3 },
    ]);
    expect(inRange(range, ["g", 1, 5, "a"])).toBe(false);
    expect(inRange(range, ["g", 2, 5, "a"])).toBe(true);
    expect(inRange(range, ["g", 3, 5, "a"])).toBe(true);
    expect(inRange(range, ["g", 4, 5, "a"])).toBe(false);
    expect(inRange(range, ["h", 2, 5, "a"])).toBe(false);
  });

  it("a missing field is encoded as $undefined and sorts before every value", () => {
    const range = rangeFromExpressions([{ type: "Eq", fieldPath: "group", value: { $undefined: null } }]);
    expect(inRange(range, [undefined, 1])).toBe(true);
    expect(inRange(range, [null, 1])).toBe(false);
    expect(inRange(rangeFromExpressions([{ type: "Lt", fieldPath: "group", value: null }]), [undefined, 1])).toBe(true);
  });

  it("no expressions: the whole index", () => {
    expect(inRange(rangeFromExpressions([]), ["anything"])).toBe(true);
  });

  it("reads index keys, nested field paths included", () => {
    expect(keyOf({ a: { b: 2 }, _creationTime: 5, _id: "1x" }, ["a.b", "missing", "_creationTime", "_id"])).toEqual([2, undefined, 5, "1x"]);
    expect(catalog.keyFields("items", "by_group_rank")).toEqual(["group", "rank", "_creationTime", "_id"]);
    expect(catalog.keyFields("items", "by_creation_time")).toEqual(["_creationTime", "_id"]);
    expect(catalog.keyFields("items", "nope")).toBeUndefined();
    expect(catalog.project("items", { ...item("g", 1), extra: "dropped" })).not.toHaveProperty("extra");
    expect(tableOfId("10004items")).toBe("items");
    expect(tableOfId("12345")).toBeUndefined();
  });
});

describe("which writes fall into a read set", () => {
  it(".collect() covers the whole range: any write into the group, none outside it", () => {
    const reads = new ReadSet(catalog);
    stream(reads, 1, byGroup("g"), [item("g", 1), item("g", 2)], true);
    expect(reads.touches(inserted(item("g", 99)))).toBe(true);
    expect(reads.touches(inserted(item("h", 1)))).toBe(false);
    expect(reads.touches({ table: "notes", id: "1notes", before: null, after: unknownVersion })).toBe(false);
  });

  it(".take(k) with k documents covers the range up to the last one returned", () => {
    const first = item("g", 1);
    const reads = new ReadSet(catalog);
    stream(reads, 1, byGroup("g", { limit: 1 }), [first], true);
    expect(reads.touches(inserted(item("g", 0)))).toBe(true);
    expect(reads.touches(inserted(item("g", 5)))).toBe(false);
    // Same rank as the last one returned but created after it: behind it in the index.
    expect(reads.touches(inserted(item("g", 1)))).toBe(false);
    // A document leaving the covered part counts (its old version was in it), one entering it too.
    expect(reads.touches(moved(first, 7))).toBe(true);
    expect(reads.touches(moved(item("g", 9), 0))).toBe(true);
    expect(reads.touches(moved(item("g", 9), 8))).toBe(false);
  });

  it(".take(k) that found fewer than k covers the range to its end", () => {
    const reads = new ReadSet(catalog);
    stream(reads, 1, byGroup("g", { limit: 3 }), [item("g", 1)], true);
    expect(reads.touches(inserted(item("g", 50)))).toBe(true);
  });

  it("a descending read covers from the range's top down to the last document returned", () => {
    const reads = new ReadSet(catalog);
    stream(reads, 1, byGroup("g", { order: "desc", limit: 1 }), [item("g", 5)], true);
    expect(reads.touches(inserted(item("g", 9)))).toBe(true);
    expect(reads.touches(inserted(item("g", 2)))).toBe(false);
  });

  it("iteration stopped early covers up to the last document; a query never iterated covers nothing", () => {
    const reads = new ReadSet(catalog);
    stream(reads, 1, byGroup("g"), [item("g", 1), item("g", 2)], false);
    stream(reads, 2, byGroup("k"), [], false);
    expect(reads.touches(inserted(item("g", 1.5)))).toBe(true);
    expect(reads.touches(inserted(item("g", 3)))).toBe(false);
    expect(reads.touches(inserted(item("k", 1)))).toBe(false);
  });

  it("a full table scan with .first() covers creation order up to the first document", () => {
    const reads = new ReadSet(catalog);
    const oldest = item("g", 1);
    stream(reads, 1, { source: { type: "FullTableScan", tableName: "items", order: "asc" }, operators: [{ limit: 1 }] }, [oldest], true);
    expect(reads.touches(inserted(item("z", 1)))).toBe(false);
    expect(reads.touches(moved(oldest, 3))).toBe(true);
  });

  it("a point read matches writes to that document only; a write of unknown content matches every range of its table", () => {
    const reads = new ReadSet(catalog);
    const read = item("g", 1);
    reads.point(read._id);
    expect(reads.touches(moved(read, 2))).toBe(true);
    expect(reads.touches(moved(item("g", 1), 2))).toBe(false);
    stream(reads, 1, byGroup("g", { limit: 1 }), [item("g", 1)], true);
    expect(reads.touches({ table: "items", id: "1items", before: unknownVersion, after: null })).toBe(true);
    expect(reads.touches({ table: "notes", id: "1notes", before: unknownVersion, after: null })).toBe(false);
  });

  it("a page covers from after its cursor to its continue cursor", () => {
    const [a, b, c] = [item("g", 1), item("g", 2), item("g", 3)];
    const cursorOf = (document: Item) => JSON.stringify(keyOf(document, catalog.keyFields("items", "by_group_rank")!).map((field) => JSON.stringify(field)));
    const reads = new ReadSet(catalog);
    reads.page({ query: byGroup("g"), cursor: cursorOf(a) }, { continueCursor: cursorOf(b) });
    expect(reads.touches(moved(a, 1))).toBe(false);
    expect(reads.touches(moved(b, 2))).toBe(true);
    expect(reads.touches(moved(c, 3))).toBe(false);
    const last = new ReadSet(catalog);
    last.page({ query: byGroup("g"), cursor: cursorOf(b) }, { continueCursor: "_end_cursor" });
    expect(last.touches(inserted(item("g", 100)))).toBe(true);
    expect(last.touches(moved(a, 1))).toBe(false);
  });

  it("reading a system table makes the read set volatile; counts read the whole table", () => {
    const reads = new ReadSet(catalog);
    expect(reads.empty).toBe(true);
    reads.point("123_scheduled_functions");
    expect(reads.volatile).toBe(true);
    const counting = new ReadSet(catalog);
    counting.wholeTable("items");
    expect(counting.touches(inserted(item("any", 1)))).toBe(true);
  });
});
