// convex-test answers every query by walking the ids of EVERY stored document (DatabaseFake._iterateDocs),
// so each query costs time in proportion to the whole database: about three quarters of a loaded server's
// CPU. A deployment's index read never looks at other tables. The loopback server therefore runs a copy of
// convex-test that keeps one id set per table, updated where convex-test commits, and iterates only the
// queried table: the same documents, in the same order (test/engine/serverTableScan.test.ts checks it).
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
const ITERATE_BY_TABLE = `        const ids = new Set(this.__tableIds?.get(tableName) ?? []);`;
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
  ].filter(([, part]) => occurrences(source, part) !== 1);
  if (missing.length > 0) {
    throw new Error(
      `The loopback server's per-table scan does not apply to convex-test ${version}: ` +
        `${missing.map(([name]) => name).join(", ")} changed. Update test/server/tableScan.ts for this version.`,
    );
  }
  return source
    .replace(ITERATE, ITERATE_BY_TABLE)
    .replace(COMMIT, COMMIT_BY_TABLE)
    .replace(METRICS_IMPORT, `from ${JSON.stringify(metricsUrl)}`);
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
