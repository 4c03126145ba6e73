// Joining tells the farm this machine's name: the worker row is named by the host name (os.hostname()).
import * as assert from "node:assert/strict";
import { hostname } from "node:os";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, setFarmhandSetting, testFarm, waitUntil, type FarmhandApi } from "./farmhand";

const DONATE_NOW: Record<string, unknown> = { preset: "light", idleMinutes: 0, otherCpuThresholdPercent: 100, donateOnBattery: true, allowRemoteDonation: true };

type WorkerRow = { name: string; revoked?: boolean; online: boolean };

describe("joining tells the farm the machine name", function () {
  this.timeout(120_000);
  let api: FarmhandApi;
  const farm = () => new ConvexHttpClient(testFarm().url);
  /** This window's row among the org's workers, read with the shared worker key (same org). */
  const myRow = async (): Promise<WorkerRow | undefined> => {
    const overview = (await farm().query(anyApi.farm.overview, { apiKey: testFarm().workerKey })) as { workers: WorkerRow[] };
    return overview.workers.find((w) => w.name === expectedName());
  };
  const expectedName = () => `${vscode.env.appName} on ${hostname()}`;

  before(async () => {
    api = await activateFarmhand();
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    // A machine of its own (the leave token), enrolled by this window.
    const token = process.env.FARMHAND_TEST_LEAVE_TOKEN;
    assert.ok(token, "the runner passed no FARMHAND_TEST_LEAVE_TOKEN");
    await vscode.commands.executeCommand("farmhand.join", { url: testFarm().url, token });
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    // Back on the shared test machine, for the checks after the suite.
    const { url, workerKey } = testFarm();
    await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
  });

  it("names the machine on the farm by its host name at join (the worker row's name)", async () => {
    // The farm's summary is refreshed every few seconds: wait for the new row.
    const row = await waitUntil(`a worker named ${expectedName()}`, myRow, (w) => w !== undefined, 20_000);
    assert.equal(row?.revoked ?? false, false);
  });
});
