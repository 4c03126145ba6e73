import * as assert from "node:assert/strict";
import { afterEach, before, beforeEach, describe, it } from "mocha";
import * as vscode from "vscode";
import {
  activateFarmhand,
  answeringWarnings,
  declaresSetting,
  donatingContextKey,
  expectsRemoteWindow,
  joinTestFarm,
  setFarmhandSetting,
  waitForValue,
  type FarmhandApi,
} from "./farmhand";

/** Policy settings that would hold donating back for reasons other than the one a test is about. */
const PERMISSIVE_POLICY: Record<string, unknown> = { idleMinutes: 0, otherCpuThresholdPercent: 100, donateOnBattery: true };

describe("farmhand.toggle (joined)", () => {
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
  });

  beforeEach(async () => {
    for (const [key, value] of Object.entries(PERMISSIVE_POLICY)) if (declaresSetting(key)) await setFarmhandSetting(key, value);
  });

  afterEach(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await setFarmhandSetting("allowRemoteDonation", undefined);
    for (const key of Object.keys(PERMISSIVE_POLICY)) if (declaresSetting(key)) await setFarmhandSetting(key, undefined);
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
    it("is refused in a remote window while farmhand.allowRemoteDonation is off; the pause's fix asks: declined nothing changes, allowed it donates", async () => {
      await setFarmhandSetting("allowRemoteDonation", false);
      await vscode.commands.executeCommand("farmhand.toggle");
      await waitForValue("wanted after the toggle", () => api.getState().wanted, true);
      assert.equal(api.getState().donating, false, "donating started in a remote window without permission");
      assert.equal(api.getState().status.kind, "paused");
      assert.match(api.getState().status.reason ?? "", /remote window/);
      assert.equal(await donatingContextKey(), false);

      // The pause's fix asks (a modal): declined, nothing changes; allowed, the setting is on and donating starts.
      assert.equal(api.getState().actions.fix?.how, "ask");
      const declined = await answeringWarnings(undefined, () => vscode.commands.executeCommand("farmhand.fixPause"));
      assert.deepEqual(declined, ["Donate from this remote window? Jobs will run on the remote machine this window is connected to."]);
      assert.equal(vscode.workspace.getConfiguration("farmhand").get("allowRemoteDonation"), false);
      assert.equal(api.getState().donating, false);
      await answeringWarnings("Allow", () => vscode.commands.executeCommand("farmhand.fixPause"));
      assert.equal(vscode.workspace.getConfiguration("farmhand").get("allowRemoteDonation"), true);
      await waitForValue("donating once remote donation is allowed", () => api.getState().donating, true);
    });
  } else {
    it("is allowed in a local window whatever farmhand.allowRemoteDonation says", async () => {
      await setFarmhandSetting("allowRemoteDonation", false);
      await vscode.commands.executeCommand("farmhand.toggle");
      await waitForValue("donating in a local window", () => api.getState().donating, true);
    });
  }
});
