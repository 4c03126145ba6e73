// convex-test answers every query by walking the ids of EVERY stored document (DatabaseFake._iterateDocs),
// so each query costs time in proportion to the whole database: about three quarters of a loaded server's
// CPU. A deployment's index read never looks at other tables, nor at rows outside the range, and a read of the first
// few rows of a range stops after them. The loopback server therefore runs a copy of convex-test that keeps one id set
// per table and, per index, its committed documents sorted in index order, updated where convex-test commits: a query
// iterates only its table, and an index range only the ids inside its bounds (found by binary search) — with a limit
// and no filter, only as many of them as it asks for, plus the transaction's own pending writes. Every candidate still
// goes through convex-test's own range check and order (a query asking for a few documents gets its first ones picked
// in one pass, not the whole range sorted), so the answers are the same documents in the same order
// (test/engine/serverTableScan.test.ts).
//
// The copy is written next to the installed packages (node_modules/.cache), so its own imports resolve to
// the same `convex` build the stock convex-test would load; its name carries a hash of its text.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/** convex-test, and how many committed documents its queries looked at so far (candidates of ranges and scans). */
type ConvexTestModule = typeof import("convex-test") & { candidatesRead: () => number };

const ITERATE = `        const ids = new Set(Object.keys(this._documents).filter(isInTable));`;
const ITERATE_WITH_CANDIDATES = `        const ids = new Set(candidates ?? this.__tableIds?.get(tableName) ?? []);
        __candidatesRead += ids.size;`;
const ITERATE_SIGNATURE = `    _iterateDocs(tableName, callback) {`;
const ITERATE_SIGNATURE_WITH_CANDIDATES = `    _iterateDocs(tableName, callback, candidates) {`;
const COMMIT = `            if (this._writes.length === 0) {
                if (write === null) {
                    delete this._documents[_id];
                }
                else {
                    this._documents[_id] =`;
const COMMIT_BY_TABLE_AND_INDEX = `            if (this._writes.length === 0) {
                __indexCommit(this, _id, this._documents[_id] ?? null, write === null || commitTs === null ? write : resolveCommittedValues(write, commitTs));
                const __table = tableNameFromId(_id);
                this.__tableIds ??= new Map();
                if (!this.__tableIds.has(__table)) this.__tableIds.set(__table, new Set());
                if (write === null) {
                    this.__tableIds.get(__table).delete(_id);
                    delete this._documents[_id];
                }
                else {
                    this.__tableIds.get(__table).add(_id);
                    this._documents[_id] =`;
const METRICS_IMPORT = `from "./transactionMetrics.js"`;
const INDEX_RANGE = `                this._iterateDocs(tableName, (doc) => {
                    if (source.range.every((filter) => evaluateRangeFilter(doc, filter))) {
                        results.push(doc);
                    }
                });`;
// first/take/unique ask for a few documents (a limit, no filter): those are picked from the candidates in one pass
// rather than sorting them all, the same documents in the same order (the comparison ends with _creationTime and
// _id, so no two documents compare equal).
const SORT = `        results.sort((a, b) => {
            const orderMultiplier = order === "asc" ? 1 : -1;`;
const SORT_OR_PICK = `        if (limit !== null && limit.limit <= __PICK_AT_MOST && filters.length === 0 && results.length > limit.limit) {
            results = __smallest(results, limit.limit, order, fieldPathsToSortBy);
        }
        else results.sort((a, b) => {
            const orderMultiplier = order === "asc" ? 1 : -1;`;
const RESULTS_CONST = `        const results = [];
        let fieldPathsToSortBy;`;
const RESULTS_LET = `        let results = [];
        let fieldPathsToSortBy;`;
// the range's bounds are made values once per query, not once per candidate (convex-test's evaluateRangeFilter does)
const INDEX_RANGE_SORTED = `                const __bounds = source.range.map((filter) => ({ filter, value: evaluateQueryValue(filter.value) }));
                this._iterateDocs(tableName, (doc) => {
                    if (__bounds.every(({ filter, value }) => __inRange(evaluateFieldPath(filter.fieldPath, doc), filter.type, value))) {
                        results.push(doc);
                    }
                }, __rangeCandidates(this, tableName, indexName, source.range, order, __limitWithoutFilter(query)));`;

/**
 * The seven places of convex-test's dist/index.js the patch rewrites, each found as exact text that must occur
 * exactly once: an upgrade that changes or repeats one stops the patch, naming it, rather than patch the wrong code.
 */
export const ANCHORS: ReadonlyArray<{ name: string; text: string; patched: (metricsUrl: string) => string }> = [
  { name: "DatabaseFake._iterateDocs's signature", text: ITERATE_SIGNATURE, patched: () => ITERATE_SIGNATURE_WITH_CANDIDATES },
  { name: "DatabaseFake._iterateDocs", text: ITERATE, patched: () => ITERATE_WITH_CANDIDATES },
  { name: "DatabaseFake.commit", text: COMMIT, patched: () => COMMIT_BY_TABLE_AND_INDEX },
  { name: "DatabaseFake._resolveQuerySource's index range", text: INDEX_RANGE, patched: () => INDEX_RANGE_SORTED },
  { name: "DatabaseFake._resolveQuerySource's results", text: RESULTS_CONST, patched: () => RESULTS_LET },
  { name: "DatabaseFake._resolveQuerySource's sort", text: SORT, patched: () => SORT_OR_PICK },
  // its own imports resolve next to the stock package, wherever the copy is written
  { name: "the transactionMetrics import", text: METRICS_IMPORT, patched: (metricsUrl) => `from ${JSON.stringify(metricsUrl)}` },
];

/**
 * Appended to the module. Per index (not by_id / by_creation_time): its committed documents as entries { key, id },
 * sorted by the index's fields, then _creationTime and _id, compared as convex-test orders them (compareValues). An
 * index range reads the entries between its bounds; a query with a limit and no filter reads only the first (or last)
 * `limit` of them that the transaction has not written — what it wrote is a candidate anyway (_iterateDocs adds it),
 * and every candidate is checked against the range as it reads now.
 */
const SORTED_INDEX = `
// committed documents the copy looked at to answer queries, since it was loaded: its work, as a count (tests read it)
let __candidatesRead = 0;
export function candidatesRead() {
    return __candidatesRead;
}
function __sortedIndexes(db, table) {
    db.__sortedIndexes ??= new Map();
    let indexes = db.__sortedIndexes.get(table);
    if (indexes === undefined) {
        indexes = new Map();
        for (const index of db._schema?.tables.get(table)?.indexes ?? []) {
            indexes.set(index.indexDescriptor, { fields: index.fields.concat(["_creationTime", "_id"]), entries: [] });
        }
        db.__sortedIndexes.set(table, indexes);
    }
    return indexes;
}
function __entryKey(fields, doc) {
    return fields.map((field) => evaluateFieldPath(field, doc));
}
function __comparePrefix(key, prefix) {
    for (let i = 0; i < prefix.length; i++) {
        const v = compareValues(key[i], prefix[i]);
        if (v !== 0) return v;
    }
    return 0;
}
// the first entry whose key, cut to the prefix's length, is above the prefix (past) or at least equal to it
function __position(entries, prefix, past) {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const v = __comparePrefix(entries[mid].key, prefix);
        if (v > 0 || (v === 0 && !past)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}
function __indexCommit(db, id, before, after) {
    for (const index of __sortedIndexes(db, tableNameFromId(id)).values()) {
        if (before !== null) {
            const at = __position(index.entries, __entryKey(index.fields, before), false);
            if (index.entries[at]?.id !== id) throw new Error("the loopback server's sorted index lost " + id);
            index.entries.splice(at, 1);
        }
        if (after !== null) {
            const key = __entryKey(index.fields, after);
            index.entries.splice(__position(index.entries, key, false), 0, { key, id });
        }
    }
}
function __limitWithoutFilter(query) {
    if (query.operators.some((operator) => "filter" in operator)) return null;
    return query.operators.find((operator) => "limit" in operator)?.limit ?? null;
}
// the committed ids inside the range (equalities on the first fields, then bounds on the next), in index order, or
// undefined (the whole table) for a range of another shape
function __rangeCandidates(db, table, indexName, range, order, limit) {
    const index = __sortedIndexes(db, table).get(indexName);
    if (index === undefined) return undefined;
    const eq = [];
    let lower = null;
    let upper = null;
    for (const filter of range) {
        const value = evaluateQueryValue(filter.value);
        const field = index.fields[eq.length];
        if (filter.fieldPath !== field) return undefined;
        if (filter.type === "Eq" && lower === null && upper === null) eq.push(value);
        else if ((filter.type === "Gt" || filter.type === "Gte") && lower === null) lower = { value, past: filter.type === "Gt" };
        else if ((filter.type === "Lt" || filter.type === "Lte") && upper === null) upper = { value, past: filter.type === "Lte" };
        else return undefined;
    }
    const { entries } = index;
    const from = lower === null ? __position(entries, eq, false) : __position(entries, eq.concat([lower.value]), lower.past);
    const to = upper === null ? __position(entries, eq, true) : __position(entries, eq.concat([upper.value]), upper.past);
    if (limit === null || to - from <= limit) return entries.slice(from, Math.max(from, to)).map((entry) => entry.id);
    const written = new Set();
    for (const layer of db._writes) for (const id of Object.keys(layer)) written.add(id);
    const ids = [];
    for (let i = order === "desc" ? to - 1 : from; ids.length < limit && i >= from && i < to; i += order === "desc" ? -1 : 1) {
        if (!written.has(entries[i].id)) ids.push(entries[i].id);
    }
    return ids;
}
function __inRange(value, type, bound) {
    const v = compareValues(value, bound);
    switch (type) {
        case "Eq": return v === 0;
        case "Gt": return v > 0;
        case "Gte": return v >= 0;
        case "Lt": return v < 0;
        case "Lte": return v <= 0;
    }
    throw new Error(\`not implemented: range filter \${type}\`);
}
const __PICK_AT_MOST = 16;
function __compareBy(fieldPaths, order, a, b) {
    for (const fp of fieldPaths) {
        const v = compareValues(evaluateFieldPath(fp, a), evaluateFieldPath(fp, b));
        if (v !== 0) return order === "asc" ? v : -v;
    }
    return 0;
}
// the k first of docs in this order: one pass, keeping the k best so far in order
function __smallest(docs, k, order, fieldPaths) {
    const best = [];
    for (const doc of docs) {
        if (best.length === k && __compareBy(fieldPaths, order, doc, best[k - 1]) >= 0) continue;
        let at = best.length;
        while (at > 0 && __compareBy(fieldPaths, order, doc, best[at - 1]) < 0) at--;
        best.splice(at, 0, doc);
        if (best.length > k) best.pop();
    }
    return best;
}
`;

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/**
 * convex-test's dist/index.js with the per-table scan. Throws, naming the version and each anchor, when an anchor is
 * not there exactly once: a newer convex-test needs this patch updated (or dropped, if it scans per table).
 */
export function patchTableScan(source: string, version: string, metricsUrl: string): string {
  const missing = ANCHORS.filter((anchor) => occurrences(source, anchor.text) !== 1);
  if (missing.length > 0) {
    throw new Error(
      `The loopback server's per-table scan does not apply to convex-test ${version}: ` +
        `${missing.map((anchor) => anchor.name).join(", ")} changed. Update test/server/tableScan.ts for this version.`,
    );
  }
  // (a function as the replacement: the text is taken as it is, "$" and all)
  return ANCHORS.reduce((text, anchor) => text.replace(anchor.text, () => anchor.patched(metricsUrl)), source) + SORTED_INDEX;
}

/** The installed convex-test: its entry file, its version. */
export function installedConvexTest(): { entry: string; version: string } {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("convex-test");
  const manifest = JSON.parse(readFileSync(join(entry, "..", "..", "package.json"), "utf8")) as { version?: unknown };
  return { entry, version: typeof manifest.version === "string" ? manifest.version : "(unknown version)" };
}

/** Writes the patched copy (once per text) and returns its path. */
export function writePatchedConvexTest(): string {
  const { entry, version } = installedConvexTest();
  const metricsUrl = pathToFileURL(join(dirname(entry), "transactionMetrics.js")).href;
  const patched = patchTableScan(readFileSync(entry, "utf8"), version, metricsUrl);
  const hash = createHash("sha256").update(patched).digest("hex").slice(0, 16);
  // node_modules/convex-test/dist/index.js → node_modules/.cache/farmhand-table-scan/<version>-<hash>.mjs
  const folder = join(entry, "..", "..", "..", ".cache", "farmhand-table-scan");
  const file = join(folder, `${version}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(folder, { recursive: true });
    // Written aside and renamed, so a process loading it never sees half a file.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, patched);
    renameSync(partial, file);
  }
  return file;
}

let loading: Promise<ConvexTestModule> | undefined;

/** convex-test with the per-table scan, loaded once per process. */
export function loadConvexTest(): Promise<ConvexTestModule> {
  loading ??= import(pathToFileURL(writePatchedConvexTest()).href) as Promise<ConvexTestModule>;
  return loading;
}
