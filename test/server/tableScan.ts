// convex-test answers every query by walking the ids of EVERY stored document (DatabaseFake._iterateDocs),
// so each query costs time in proportion to the whole database: about three quarters of a loaded server's
// CPU. A deployment's index read never looks at other tables, nor at rows outside the range. The loopback server
// therefore runs a copy of convex-test that keeps one id set per table, and per index one id set per combination of
// values of each prefix of its fields, updated where convex-test commits: a query iterates only its table, and an
// index range that starts with equalities only the ids under them. Every candidate still goes through convex-test's own range
// check and order (a query asking for a few documents gets its first ones picked in one pass, not the whole range sorted),
// so the answers are the same documents in the same order (test/engine/serverTableScan.test.ts).
//
// The copy is written next to the installed packages (node_modules/.cache), so its own imports resolve to
// the same `convex` build the stock convex-test would load; its name carries a hash of its text.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

type ConvexTestModule = typeof import("convex-test");

const ITERATE = `        const ids = new Set(Object.keys(this._documents).filter(isInTable));`;
const COMMIT = `                if (write === null) {
                    delete this._documents[_id];
                }
                else {
                    this._documents[_id] =`;
const COMMIT_BY_TABLE = `                const __table = tableNameFromId(_id);
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
const ITERATE_SIGNATURE = `    _iterateDocs(tableName, callback) {`;
const ITERATE_SIGNATURE_WITH_CANDIDATES = `    _iterateDocs(tableName, callback, candidates) {`;
const ITERATE_WITH_CANDIDATES = `        const ids = new Set(candidates ?? this.__tableIds?.get(tableName) ?? []);`;
const COMMIT_TOP = `            if (this._writes.length === 0) {
                const __table = tableNameFromId(_id);`;
const COMMIT_TOP_INDEXED = `            if (this._writes.length === 0) {
                __indexEqPrefixes(this, _id, this._documents[_id] ?? null, write);
                const __table = tableNameFromId(_id);`;
const INDEX_RANGE = `                this._iterateDocs(tableName, (doc) => {
                    if (source.range.every((filter) => evaluateRangeFilter(doc, filter))) {
                        results.push(doc);
                    }
                });`;
// first/take/unique ask for a few documents (a limit, no filter): those are picked from the candidates in one pass
// rather than sorting them all, the same documents in the same order (the comparison ends with _creationTime and
// _id, so no two documents compare equal). A skip from one index prefix to the next over a big bucket stays cheap.
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
const INDEX_RANGE_BY_EQ_PREFIX = `                const __bounds = source.range.map((filter) => ({ filter, value: evaluateQueryValue(filter.value) }));
                this._iterateDocs(tableName, (doc) => {
                    if (__bounds.every(({ filter, value }) => __inRange(evaluateFieldPath(filter.fieldPath, doc), filter.type, value))) {
                        results.push(doc);
                    }
                }, __eqPrefixCandidates(this, tableName, indexName, source.range));`;
/**
 * Appended to the module. Per index (not by_id / by_creation_time) and per prefix of its fields: the committed ids
 * under each combination of values. An index range starting with equalities reads only the ids under its longest
 * equal prefix. Only primitive values have keys (an object or array never equals one; an equality on an object
 * reads the whole table as before). Keys carry the type, so 1 (float64) and 1n (int64) never share a bucket.
 */
const EQ_PREFIX_INDEX = `
function __valueKey(value) {
    if (value === null) return "null";
    const type = typeof value;
    return type === "object" ? null : type + ":" + String(value);
}
function __prefixIndexes(db, table) {
    db.__prefixIndexes ??= new Map();
    let indexes = db.__prefixIndexes.get(table);
    if (indexes === undefined) {
        indexes = new Map();
        for (const index of db._schema?.tables.get(table)?.indexes ?? []) {
            indexes.set(index.indexDescriptor, { fields: index.fields, buckets: new Map() });
        }
        db.__prefixIndexes.set(table, indexes);
    }
    return indexes;
}
// "1:<key of field 1>", "2:<key 1>\0<key 2>", …: one key per prefix of the index's fields, up to the first object.
function __prefixKeys(fields, valueOf) {
    const keys = [];
    let prefix = "";
    for (const [i, field] of fields.entries()) {
        const key = __valueKey(valueOf(field));
        if (key === null) break;
        prefix = i === 0 ? key : prefix + "\0" + key;
        keys.push(i + 1 + ":" + prefix);
    }
    return keys;
}
function __indexEqPrefixes(db, id, before, after) {
    for (const index of __prefixIndexes(db, tableNameFromId(id)).values()) {
        if (before !== null) {
            for (const key of __prefixKeys(index.fields, (field) => evaluateFieldPath(field, before))) {
                const ids = index.buckets.get(key);
                ids?.delete(id);
                if (ids?.size === 0) index.buckets.delete(key);
            }
        }
        if (after !== null) {
            for (const key of __prefixKeys(index.fields, (field) => evaluateFieldPath(field, after))) {
                let ids = index.buckets.get(key);
                if (ids === undefined) index.buckets.set(key, (ids = new Set()));
                ids.add(id);
            }
        }
    }
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
function __eqPrefixCandidates(db, table, indexName, range) {
    const index = __prefixIndexes(db, table).get(indexName);
    if (index === undefined) return undefined;
    let eqs = 0;
    while (eqs < range.length && eqs < index.fields.length && range[eqs].type === "Eq" && range[eqs].fieldPath === index.fields[eqs]) eqs++;
    const keys = __prefixKeys(index.fields.slice(0, eqs), (field) => evaluateQueryValue(range.find((r) => r.fieldPath === field).value));
    if (keys.length === 0) return undefined;
    return index.buckets.get(keys[keys.length - 1]) ?? [];
}
`;

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/**
 * convex-test's dist/index.js with the per-table scan. Throws, naming the version, when the code it replaces
 * is not there exactly once: a newer convex-test needs this patch updated (or dropped, if it scans per table).
 */
export function patchTableScan(source: string, version: string, metricsUrl: string): string {
  const missing = [
    ["DatabaseFake._iterateDocs", ITERATE],
    ["DatabaseFake.commit", COMMIT],
    ["the transactionMetrics import", METRICS_IMPORT],
    ["DatabaseFake._iterateDocs's signature", ITERATE_SIGNATURE],
    ["DatabaseFake._resolveQuerySource's index range", INDEX_RANGE],
    ["DatabaseFake._resolveQuerySource's sort", SORT],
    ["DatabaseFake._resolveQuerySource's results", RESULTS_CONST],
  ].filter(([, part]) => occurrences(source, part) !== 1);
  if (missing.length > 0) {
    throw new Error(
      `The loopback server's per-table scan does not apply to convex-test ${version}: ` +
        `${missing.map(([name]) => name).join(", ")} changed. Update test/server/tableScan.ts for this version.`,
    );
  }
  const patched =
    source
      .replace(ITERATE_SIGNATURE, ITERATE_SIGNATURE_WITH_CANDIDATES)
      .replace(ITERATE, ITERATE_WITH_CANDIDATES)
      .replace(COMMIT, COMMIT_BY_TABLE)
      .replace(COMMIT_TOP, COMMIT_TOP_INDEXED)
      .replace(INDEX_RANGE, INDEX_RANGE_BY_EQ_PREFIX)
      .replace(RESULTS_CONST, RESULTS_LET)
      .replace(SORT, SORT_OR_PICK)
      .replace(METRICS_IMPORT, `from ${JSON.stringify(metricsUrl)}`) + EQ_PREFIX_INDEX;
  // The commit hook goes into text the per-table patch wrote: check it landed rather than index nothing.
  if (occurrences(patched, "__indexEqPrefixes(this, _id") !== 1) {
    throw new Error(`The loopback server's index patch did not apply to convex-test ${version}. Update test/server/tableScan.ts.`);
  }
  return patched;
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
