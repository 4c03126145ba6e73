import * as assert from "node:assert/strict";
import { before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, declaredSettings, joinTestFarm, testFarm, type FarmhandApi } from "./farmhand";
import { WORKER_KEY_PATTERN } from "./secretPattern";

// The other half of this check runs after the suite, in the runner (test/harness/secretsAudit.mjs): the key is in the
// workbench's SecretStorage (decrypted there), and in no file of the profile, no globalState entry and no log.
describe("the worker key lives in SecretStorage only", () => {
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
  });

  it("is in no farmhand.* setting, in any scope or language", () => {
    const properties = declaredSettings();
    assert.ok(properties.includes("farmhand.deploymentUrl"), "the manifest declares no farmhand.deploymentUrl");
    const config = vscode.workspace.getConfiguration();
    for (const name of properties) {
      const inspected = config.inspect(name);
      assert.ok(inspected, `${name} cannot be inspected`);
      assert.doesNotMatch(JSON.stringify(inspected), WORKER_KEY_PATTERN, `${name} holds a worker key`);
    }
    // Keys nobody declared, too: the whole farmhand section as the extension reads it.
    assert.doesNotMatch(JSON.stringify(vscode.workspace.getConfiguration("farmhand")), WORKER_KEY_PATTERN);
    // The join did write settings: the URL, which is no secret.
    assert.equal(config.inspect("farmhand.deploymentUrl")?.globalValue, testFarm().url);
  });

  it("is not in the state the extension exports", () => {
    const state = JSON.stringify(api.getState());
    assert.doesNotMatch(state, WORKER_KEY_PATTERN);
    assert.ok(!state.includes(testFarm().workerKey));
  });
});
