import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, joinTestFarm, setFarmhandSetting, testFarm, waitUntil } from "./farmhand";
import { getJob, submitJob } from "./farmClient";

/** Donate at once from this (remote) window, whatever else loads the machine. */
const DONATE_NOW = donateNow("full");
/** Long enough to watch it run here (a second or two as WebAssembly; much longer on a busy machine). */
const N = 20_000_000;
/** π(2·10⁷). */
const PRIMES_BELOW_N = 1_270_607;
const JOB_TIMEOUT = 90_000;

async function publishExample(): Promise<number> {
  const module = process.env.FARMHAND_TEST_APP_MODULE;
  assert.ok(module, "the runner built no example app (FARMHAND_TEST_APP_MODULE)");
  const res = await fetch(`${testFarm().url}/api/apps/primes`, {
    method: "POST",
    headers: { authorization: `Bearer ${process.env.FARMHAND_TEST_PUBLISH_KEY}`, "content-type": "application/wasm" },
    body: readFileSync(module),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { version: number }).version;
}

describe("farm apps: this machine runs them only once its donor allowed it", function () {
  this.timeout(3 * JOB_TIMEOUT);
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of [...Object.keys(DONATE_NOW), "runApps"]) await setFarmhandSetting(key, undefined);
  });

  it("with farmhand.runApps off no app job is taken; on, it runs in the sandbox and shows as app.<name> v<version>", async () => {
    const version = await publishExample();
    await setFarmhandSetting("runApps", false);
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await waitUntil("waiting for work", () => api.getState(), (s) => s.donating && s.status.kind === "waiting", 15_000);
    const appJob = await submitJob("app.primes", { n: N });
    const echo = await submitJob("demo.echo", { text: "still working" });
    await waitUntil("the echo job done", () => getJob(echo), (j) => j.status === "succeeded", JOB_TIMEOUT);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal((await getJob(appJob)).status, "pending", "a machine that does not allow apps took an app job");

    await setFarmhandSetting("runApps", true);
    const seen = await waitUntil("the app job running here", () => api.getState(), (s) => s.jobs.some((j) => j.jobId === appJob), JOB_TIMEOUT);
    assert.equal(seen.jobs.find((j) => j.jobId === appJob)?.type, `app.primes v${version}`);
    const done = await waitUntil("the app job done", () => getJob(appJob), (j) => j.status === "succeeded" || j.status === "dead", JOB_TIMEOUT);
    assert.deepEqual(done.result, { n: N, count: PRIMES_BELOW_N });
  });
});
