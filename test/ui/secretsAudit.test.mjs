// The host runner's key audit (test/harness/secretsAudit.mjs) checked on made-up folders, so it cannot pass vacuously.
import * as assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import { filesHoldingAKey, WORKER_KEY_PATTERN } from "../harness/secretsAudit.mjs";

const KEY = `fh_w_${"Ab3-_".repeat(8)}xyz`;

describe("the worker-key audit", () => {
  let dir;
  before(() => (dir = mkdtempSync(join(tmpdir(), "farmhand-audit-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("recognises a whole worker key, not its 9-character display prefix", () => {
    assert.equal(KEY.length, 48);
    assert.match(`"apiKey":"${KEY}"`, WORKER_KEY_PATTERN);
    assert.doesNotMatch(`key ${KEY.slice(0, 9)}… revoked`, WORKER_KEY_PATTERN);
  });

  it("finds a key in any file of a nested folder, binary ones included, and nothing in clean files", () => {
    mkdirSync(join(dir, "logs", "exthost1"), { recursive: true });
    writeFileSync(join(dir, "settings.json"), JSON.stringify({ "farmhand.deploymentUrl": "http://127.0.0.1:1" }));
    writeFileSync(join(dir, "logs", "exthost1", "Farmhand.log"), `joined with ${KEY.slice(0, 9)}\n`);
    assert.deepEqual(filesHoldingAKey(dir), []);
    writeFileSync(join(dir, "logs", "exthost1", "000003.log"), Buffer.concat([Buffer.from([0, 255, 7]), Buffer.from(KEY), Buffer.from([0])]));
    assert.deepEqual(filesHoldingAKey(dir), [join("logs", "exthost1", "000003.log")]);
  });
});
