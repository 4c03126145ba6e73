// Joining tells the farm this machine's name: the worker row is named by the host name (os.hostname()); Leave Farm
// (after its modal confirmation) tells the farm, which revokes this machine's key.
import * as assert from "node:assert/strict";
import { hostname } from "node:os";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, answeringWarnings, donateNow, type FarmhandApi, setFarmhandSetting, testFarm, waitUntil } from "./farmhand";
import { cancelJob, getJob, submitPrimes } from "./farmClient";

/** Long enough to be still running when the machine leaves. */
const N_LONG = 2_000_000_000;

const DONATE_NOW = donateNow("light");

type WorkerRow = { workerId: string; name: string; revoked?: boolean; online: boolean };

describe("joining tells the farm the machine name", function () {
  this.timeout(120_000);
  let api: FarmhandApi;
  const farm = () => new ConvexHttpClient(testFarm().url);
  /** This window's row among the org's workers, read with the shared worker key (same org). */
  /** Rows of this machine's name from before this file joined: earlier files' joins (lists put the most recently seen first). */
  let earlier = new Set<string>();
  const rowsNamedHere = async (): Promise<WorkerRow[]> => {
    const overview = (await farm().query(anyApi.farm.overview, { apiKey: testFarm().workerKey })) as { workers: WorkerRow[] };
    return overview.workers.filter((w) => w.name === expectedName());
  };
  const myRow = async (): Promise<WorkerRow | undefined> => (await rowsNamedHere()).find((w) => !earlier.has(w.workerId));
  const expectedName = () => `${vscode.env.appName} on ${hostname()}`;
  /** Is this worker among the org's workers (a revoked one is not listed)? */
  const listed = async (workerId: string): Promise<boolean> => {
    const overview = (await farm().query(anyApi.farm.overview, { apiKey: testFarm().workerKey })) as { workers: WorkerRow[] };
    return overview.workers.some((w) => w.workerId === workerId);
  };

  before(async () => {
    api = await activateFarmhand();
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    // A machine of its own (the leave token), enrolled by this window.
    earlier = new Set((await rowsNamedHere()).map((w) => w.workerId));
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

  it("Leave Farm, confirmed: the farm revokes this machine's key (its row leaves the farm's workers)", async () => {
    const mine = await waitUntil(`a worker named ${expectedName()}`, myRow, (w) => w !== undefined, 20_000);
    await vscode.commands.executeCommand("farmhand.startDonating");
    const jobId = await submitPrimes(N_LONG);
    try {
      await waitUntil("the job running here", () => api.getState().jobs.map((j) => j.jobId), (ids) => ids.includes(jobId), 30_000);
      const asked = await answeringWarnings("Leave Farm", () => vscode.commands.executeCommand("farmhand.leave"));
      assert.equal(asked.length, 1, `expected one question (no warning that the farm was not told), saw ${JSON.stringify(asked)}`);
      assert.match(asked[0] ?? "", /^Leave the farm\?/);
      assert.equal(api.getState().joined, false);
      const job = await waitUntil("the job back in the queue", () => getJob(jobId), (j) => j.status === "pending", 10_000);
      assert.equal(job.status, "pending");
    } finally {
      await cancelJob(jobId).catch(() => undefined);
    }
    await waitUntil("this machine's row gone from the farm's workers", () => listed(mine!.workerId), (there) => !there, 30_000);
  });
});
