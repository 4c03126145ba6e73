import * as assert from "node:assert/strict";
import { afterEach, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, joinTestFarm, setFarmhandSetting, waitForValue, waitUntil, type FarmhandApi } from "./farmhand";

/** Policy settings that would hold donating back for reasons other than the time windows. */
const PERMISSIVE_POLICY: Record<string, unknown> = { idleMinutes: 0, otherCpuThresholdPercent: 100, donateOnBattery: true, allowRemoteDonation: true };
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

describe("farmhand.timeWindows (the setting reaches the policy)", () => {
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(PERMISSIVE_POLICY)) await setFarmhandSetting(key, value);
  });

  afterEach(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await setFarmhandSetting("timeWindows", undefined);
    for (const key of Object.keys(PERMISSIVE_POLICY)) await setFarmhandSetting(key, undefined);
    await waitForValue("donating after clean-up", () => api.getState().donating, false);
  });

  it("pauses outside the windows, donates inside them, and never donates on a window it cannot read", async () => {
    const today = new Date().getDay();
    const otherDay = DAYS[(today + 3) % 7]; // a whole day that is neither today nor (for a window crossing midnight) yesterday
    await setFarmhandSetting("timeWindows", [otherDay]);
    await vscode.commands.executeCommand("farmhand.toggle");
    const paused = await waitUntil("paused by the time windows", () => api.getState().status, (s) => s.kind === "paused");
    assert.equal(paused.reason, "outside the donation time windows");
    assert.equal(api.getState().donating, false);

    // Today would allow it, but the schedule also holds a window that cannot be read: the donor's intent is unknown.
    await setFarmhandSetting("timeWindows", [DAYS[today], "Moonday 10:00-11:00"]);
    const unreadable = await waitUntil("paused by the unreadable window", () => api.getState().status, (s) => s.kind === "paused" && /not understood/.test(s.reason ?? ""));
    assert.equal(unreadable.reason, 'time window not understood: "Moonday 10:00-11:00": "moonday" is not a day (use Mon, Tue, … Sun)');
    assert.equal(api.getState().donating, false);
    assert.deepEqual(api.getState().policy.problems, ['"Moonday 10:00-11:00": "moonday" is not a day (use Mon, Tue, … Sun)']);

    await setFarmhandSetting("timeWindows", [DAYS[today]]);
    await waitForValue("donating inside today's window", () => api.getState().donating, true);
    assert.deepEqual(api.getState().policy.problems, []);
  });
});
