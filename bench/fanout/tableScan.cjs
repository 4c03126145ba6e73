// Preloaded (`node --require`) into the benchmark's loopback servers, for both designs alike.
//
// convex-test answers every query by walking the ids of EVERY stored document (DatabaseFake._iterateDocs),
// so each query costs time in proportion to the whole database: three quarters of the server's CPU in the
// saturated scenario (see a profile with FANOUT_PROF=<folder>). A deployment's index read never looks at
// other tables. This preload serves a copy of convex-test that keeps one id set per table, updated where
// convex-test commits, and iterates only the queried table: the same documents, in the same order.
const { execFileSync } = require("node:child_process");
const { mkdtempSync, readFileSync, writeFileSync } = require("node:fs");
const Module = require("node:module");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

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

const original = require.resolve("convex-test");
// the ESM builds convex-test itself imports (resolved with the "import" condition, as it would be)
const esm = JSON.parse(
  execFileSync(process.execPath, ["--input-type=module", "-e", "console.log(JSON.stringify([import.meta.resolve('convex/server'), import.meta.resolve('convex/values')]))"], {
    encoding: "utf8",
  }),
);
const source = readFileSync(original, "utf8");
if (!source.includes(ITERATE) || !source.includes(COMMIT)) {
  throw new Error("tableScan: convex-test's DatabaseFake changed; update bench/fanout/tableScan.cjs");
}
const dir = mkdtempSync(join(tmpdir(), "farmhand-convex-test-"));
writeFileSync(join(dir, "transactionMetrics.mjs"), readFileSync(join(original, "..", "transactionMetrics.js"), "utf8"));
const patched = join(dir, "index.mjs");
writeFileSync(
  patched,
  source
    .replace(ITERATE, ITERATE_BY_TABLE)
    .replace(COMMIT, COMMIT_BY_TABLE)
    .replace(`from "convex/server"`, `from ${JSON.stringify(esm[0])}`)
    .replace(`from "convex/values"`, `from ${JSON.stringify(esm[1])}`)
    .replace(`from "./transactionMetrics.js"`, `from "./transactionMetrics.mjs"`),
);

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "convex-test" ? patched : resolve.call(this, request, ...rest);
};
