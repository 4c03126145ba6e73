import * as assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, type FarmhandState, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { cancelJob, getJob, submitPrimes } from "./farmClient";

/** The medium preset (it freezes jobs when the owner is back), donating at once whatever else loads the machine. */
const DONATE_NOW = donateNow("medium", { maxConcurrentJobs: 1 });
/** The largest demo.primes job: it keeps sieving for far longer than this test. */
const N_MAX = 2_000_000_000;
const TIMEOUT = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const jobHere = (s: FarmhandState, jobId: string) => s.jobs.find((j) => j.jobId === jobId);

describe("suspension: the policy pauses for the owner's return and the running job is frozen, then thawed", function () {
  this.timeout(4 * TIMEOUT);
  let api: FarmhandApi;
  let jobId: string | undefined;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
  });

  after(async () => {
    if (jobId) await cancelJob(jobId).catch(() => undefined);
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
  });

  it("freezes the job while the owner is back (it keeps its lease and says so), and lets it run on afterwards", async () => {
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await waitUntil("waiting for work", () => api.getState(), (s) => s.donating && s.status.kind === "waiting", 15_000);
    const id = (jobId = await submitPrimes(N_MAX));
    await waitUntil("the job running here with progress", () => api.getState(), (s) => (jobHere(s, id)?.progress ?? 0) > 0, TIMEOUT);

    // The owner comes back: with 600 idle minutes needed, this window counts as in use.
    await setFarmhandSetting("idleMinutes", 600);
    const paused = await waitUntil("the job frozen", () => api.getState(), (s) => jobHere(s, id)?.suspendedSince !== undefined, 10_000);
    assert.equal(paused.status.kind, "suspended", "the policy's pause froze the job: the state says held, not finishing");
    assert.match(paused.status.reason ?? "", /you are using the computer/);
    const shown = await waitUntil("the surfaces saying so", () => api.surfaces(), (v) => /suspended/.test(v.statusBar.text), 5_000);
    assert.match(shown.statusBar.text, /Farmhand: suspended — you are using this machine$/);
    assert.match(shown.statusBar.tooltip, /Held here, frozen until you leave the machine idle:\n- \$\(debug-pause\) demo\\\.primes, frozen (just now|\d+ min)/);
    assert.ok(shown.tree.rows.some((row) => /^\s*demo\.primes — frozen since \d{1,2}:\d{2}/.test(row)), `no frozen job row in ${JSON.stringify(shown.tree.rows)}`);
    const onFarm = await waitUntil("the farm shows it suspended", () => getJob(id), (j) => j.suspendedSince !== undefined, 10_000);
    assert.equal(onFarm.status, "running", "a frozen job keeps its lease");

    // Frozen: no progress at all (one report already on its way may still land).
    await sleep(500);
    const frozenProgress = jobHere(api.getState(), id)?.progress;
    await sleep(2_000);
    assert.equal(jobHere(api.getState(), id)?.progress, frozenProgress, "a frozen job made progress");

    // Idle again: the job thaws where it stopped and goes on.
    await setFarmhandSetting("idleMinutes", 0);
    const thawed = await waitUntil("the job running again", () => api.getState(), (s) => {
      const job = jobHere(s, id);
      return job !== undefined && job.suspendedSince === undefined && (job.progress ?? 0) > (frozenProgress ?? 0);
    }, TIMEOUT);
    assert.equal(thawed.status.kind, "working");
    await waitUntil("the farm shows it running again", () => getJob(id), (j) => j.status === "running" && j.suspendedSince === undefined, 10_000);
  });

  it("with the full preset the same pause lets the job run on (at the lowest priority), as before", async () => {
    const id = jobId!;
    await setFarmhandSetting("preset", "full");
    await setFarmhandSetting("idleMinutes", 600);
    const paused = await waitUntil("paused for the owner's return", () => api.getState(), (s) => s.status.kind === "paused", 10_000);
    assert.match(paused.status.reason ?? "", /you are using the computer/);
    const from = jobHere(api.getState(), id)?.progress ?? 0;
    const ranOn = await waitUntil("the job still making progress", () => api.getState(), (s) => (jobHere(s, id)?.progress ?? 0) > from, TIMEOUT);
    assert.equal(jobHere(ranOn, id)?.suspendedSince, undefined, "the full preset froze the job");
    await setFarmhandSetting("idleMinutes", 0);
    await setFarmhandSetting("preset", "medium");
  });
});
