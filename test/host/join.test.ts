import * as assert from "node:assert/strict";
import { before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, joinedContextKey, testFarm, waitForValue, type FarmhandApi } from "./farmhand";

describe("farmhand.join (scripted, against the loopback test farm)", () => {
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
  });

  it("starts unjoined: state, context key and status say so", async () => {
    assert.equal(api.getState().joined, false);
    assert.equal(api.getState().status.kind, "notJoined");
    assert.equal(await joinedContextKey(), false);
  });

  it("refuses a key the farm does not know, with a clear error, and stays unjoined", async () => {
    const { url } = testFarm();
    await assert.rejects(
      Promise.resolve(vscode.commands.executeCommand("farmhand.join", { url, token: "fh_w_not-a-real-key" })),
      /could not join the farm/,
    );
    assert.equal(api.getState().joined, false);
  });

  it("refuses a URL that is not http(s)", async () => {
    await assert.rejects(
      Promise.resolve(vscode.commands.executeCommand("farmhand.join", { url: "ftp://farm.invalid", token: testFarm().workerKey })),
      /not an http\(s\) URL/,
    );
    assert.equal(api.getState().joined, false);
  });

  it("joins with a worker key: state, context key and status follow", async () => {
    const { url, workerKey } = testFarm();
    await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
    assert.equal(api.getState().joined, true);
    assert.equal(api.getState().status.kind, "off");
    await waitForValue("context key farmhand.joined", joinedContextKey, true);
  });
});
