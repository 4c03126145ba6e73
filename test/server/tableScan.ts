// convex-test answers every query by walking the ids of EVERY stored document (DatabaseFake._iterateDocs),
// so each query costs time in proportion to the whole database: about three quarters of a loaded server's
// CPU. A deployment's index read never looks at other tables, nor at rows outside the range. The loopback server
// therefore runs a copy of convex-test that keeps one id set per table, and per index one id set per combination of
// values of each prefix of its fields, updated where convex-test commits: a query iterates only its table, and an
// index range that starts with equalities only the ids under them. Every candidate still goes through convex-test's own range
// check and sort, so the answers are the same documents in the same order (test/engine/serverTableScan.test.ts).
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
const ITERATE_WITH_CANDIDATES = `        const ids = new Set(candidates ?? this.__tableIds?.get(tableName) ?? []);`;
const ITERATE_SIGNATURE = `    _iterateDocs(tableName, callback) {`;
const ITERATE_SIGNATURE_WITH_CANDIDATES = `    _iterateDocs(tableName, callback, candidates) {`;
const COMMIT = `            if (this._writes.length === 0) {
                if (write === null) {
                    delete this._documents[_id];
                }
                else {
                    this._documents[_id] =`;
const COMMIT_BY_TABLE_AND_INDEX = `            if (this._writes.length === 0) {
                __indexEqPrefixes(this, _id, this._documents[_id] ?? null, write);
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
const INDEX_RANGE = `                this._iterateDocs(tableName, (doc) => {
                    if (source.range.every((filter) => evaluateRangeFilter(doc, filter))) {
                        results.push(doc);
                    }
                });`;
const INDEX_RANGE_BY_EQ_PREFIX = `                this._iterateDocs(tableName, (doc) => {
                    if (source.range.every((filter) => evaluateRangeFilter(doc, filter))) {
                        results.push(doc);
                    }
                }, __eqPrefixCandidates(this, tableName, indexName, source.range));`;
const METRICS_IMPORT = `from "./transactionMetrics.js"`;

/**
 * The five places of convex-test's dist/index.js the patch rewrites, each found as exact text that must occur
 * exactly once: an upgrade that changes or repeats one stops the patch, naming it, rather than patch the wrong code.
 */
export const ANCHORS: ReadonlyArray<{ name: string; text: string; patched: (metricsUrl: string) => string }> = [
  { name: "DatabaseFake._iterateDocs's signature", text: ITERATE_SIGNATURE, patched: () => ITERATE_SIGNATURE_WITH_CANDIDATES },
  { name: "DatabaseFake._iterateDocs", text: ITERATE, patched: () => ITERATE_WITH_CANDIDATES },
  { name: "DatabaseFake.commit", text: COMMIT, patched: () => COMMIT_BY_TABLE_AND_INDEX },
  { name: "DatabaseFake._resolveQuerySource's index range", text: INDEX_RANGE, patched: () => INDEX_RANGE_BY_EQ_PREFIX },
  // its own imports resolve next to the stock package, wherever the copy is written
  { name: "the transactionMetrics import", text: METRICS_IMPORT, patched: (metricsUrl) => `from ${JSON.stringify(metricsUrl)}` },
];

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
  return ANCHORS.reduce((text, anchor) => text.replace(anchor.text, () => anchor.patched(metricsUrl)), source) + EQ_PREFIX_INDEX;
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
