import * as assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, declaresSetting, donatingContextKey, expectsRemoteWindow, setFarmhandSetting, waitForValue, type FarmhandApi } from "./farmhand";

describe("farmhand.toggle", () => {
  let api: FarmhandApi;

  beforeEach(async () => {
    api = await activateFarmhand();
    // Donate as soon as asked: an idle policy would otherwise hold off while the test "works".
    if (declaresSetting("idleMinutes")) await setFarmhandSetting("idleMinutes", 0);
  });

  afterEach(async () => {
    await setFarmhandSetting("allowRemoteDonation", undefined);
    if (declaresSetting("idleMinutes")) await setFarmhandSetting("idleMinutes", undefined);
    if (api.getState().wanted ?? api.getState().donating) await vscode.commands.executeCommand("farmhand.toggle");
    await waitForValue("donating after clean-up", () => api.getState().donating, false);
  });

  it("flips donating false → true → false, and the farmhand.donating context key with it", async () => {
    await setFarmhandSetting("allowRemoteDonation", true);
    assert.equal(api.getState().donating, false);
    assert.equal(await donatingContextKey(), false);

    await vscode.commands.executeCommand("farmhand.toggle");
    await waitForValue("donating after the first toggle", () => api.getState().donating, true);
    await waitForValue("context key farmhand.donating", donatingContextKey, true);

    await vscode.commands.executeCommand("farmhand.toggle");
    await waitForValue("donating after the second toggle", () => api.getState().donating, false);
    await waitForValue("context key farmhand.donating", donatingContextKey, false);
  });

  if (expectsRemoteWindow()) {
    it("is refused in a remote window while farmhand.allowRemoteDonation is off", async () => {
      await setFarmhandSetting("allowRemoteDonation", false);
      await vscode.commands.executeCommand("farmhand.toggle");
      // Give a wrongly accepted toggle the same time the accepted one gets to show.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(api.getState().donating, false, "donating started in a remote window without permission");
      assert.equal(await donatingContextKey(), false);
    });
  } else {
    it("is allowed in a local window whatever farmhand.allowRemoteDonation says", async () => {
      await setFarmhandSetting("allowRemoteDonation", false);
      await vscode.commands.executeCommand("farmhand.toggle");
      await waitForValue("donating in a local window", () => api.getState().donating, true);
    });
  }
});
