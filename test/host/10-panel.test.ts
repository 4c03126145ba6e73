// The control panel's apps line and switch (issue 12) and this machine's credit this week (issue 14), as the panel
// is sent them.
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { getJob, submitJob } from "./farmClient";

const DONATE_NOW = donateNow("light");
const JOB_TIMEOUT = 60_000;

const runAppsGlobal = () => vscode.workspace.getConfiguration("farmhand").inspect<unknown>("runApps")?.globalValue;

describe("control panel: apps switch and this week's credit", function () {
  this.timeout(3 * JOB_TIMEOUT);
  let api: FarmhandApi;
  const panel = () => api.surfaces().panel;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    await vscode.commands.executeCommand("farmhand.panel.focus");
    await waitUntil("the panel showing", panel, (p) => p !== undefined, 10_000);
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    for (const key of [...Object.keys(DONATE_NOW), "runApps"]) await setFarmhandSetting(key, undefined);
  });

  it("says whether this machine runs the farm's apps and follows the setting; Stop running apps turns it off in the user settings", async () => {
    await setFarmhandSetting("runApps", undefined);
    assert.equal((await waitUntil("panel: apps no", panel, (p) => p?.runsApps === false))?.runsApps, false);
    await setFarmhandSetting("runApps", true);
    assert.equal((await waitUntil("panel: apps yes", panel, (p) => p?.runsApps === true))?.runsApps, true);
    // The panel's "Stop running apps" performs this command (a validated setRunApps {allow: false}).
    await vscode.commands.executeCommand("farmhand.stopApps");
    assert.equal(runAppsGlobal(), false);
    assert.equal((await waitUntil("panel: apps no again", panel, (p) => p?.runsApps === false))?.runsApps, false);
    // Allowing when already allowed asks nothing and keeps it on.
    await setFarmhandSetting("runApps", true);
    await vscode.commands.executeCommand("farmhand.allowApps");
    assert.equal(runAppsGlobal(), true);
  });

  it("shows the farm's credit for this machine this week, and it grows when a job finishes here", async () => {
    const first = await waitUntil("panel: credit known", panel, (p) => p?.credit !== undefined, 15_000);
    const jobsBefore = first!.credit!.jobs;
    assert.ok(first!.credit!.cpuHours >= 0);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    const jobId = await submitJob("demo.primes", { n: 2_000_000 });
    await waitUntil("the job done", () => getJob(jobId), (j) => j.status === "succeeded", JOB_TIMEOUT);
    const last = await waitUntil("panel: credit counts the job", panel, (p) => (p?.credit?.jobs ?? 0) > jobsBefore, 15_000);
    assert.ok(last!.credit!.cpuHours >= first!.credit!.cpuHours);
    assert.deepEqual(api.getState().credit, last!.credit);
  });
});
