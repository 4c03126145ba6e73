import * as assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, type FarmhandState, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { getJob, submitPrimes } from "./farmClient";

/** Donate at once from this (remote) window, with both of the worker's slots, whatever else loads the machine. */
const DONATE_NOW = donateNow("full");
/** About two seconds of sieving on an idle core: long enough to watch (and to be still running when finish-and-stop
 * is asked for), short enough for a busy 2-core machine. */
const N = 300_000_000;
/** π(3·10⁸), the number of primes below 300,000,000. */
const PRIMES_BELOW_N = 16_252_325;
const JOB_TIMEOUT = 60_000;

const runningHere = (jobId: string) => (s: FarmhandState) => s.jobs.find((j) => j.jobId === jobId);

describe("donating: jobs from the farm run on this machine", function () {
  this.timeout(2 * JOB_TIMEOUT);
  let api: FarmhandApi;

  async function startDonating(): Promise<void> {
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await waitUntil("waiting for work", () => api.getState(), (s) => s.donating && s.status.kind === "waiting", 15_000);
  }

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
  });

  it("a submitted demo.primes job shows under This machine with progress, then completes and counts as done", async () => {
    await startDonating();
    const doneBefore = api.getState().contribution.succeeded;
    const jobId = await submitPrimes(N);

    const seen = await waitUntil("the job running here with progress", () => api.getState(), (s) => (runningHere(jobId)(s)?.progress ?? 0) > 0, JOB_TIMEOUT);
    const job = runningHere(jobId)(seen)!;
    assert.equal(job.type, "demo.primes");
    assert.ok(job.progress! > 0 && job.progress! <= 1, `progress ${job.progress} is not a fraction`);
    assert.match(job.status ?? "", /sieved up to \d+/);
    assert.equal(seen.status.kind, "working");

    const done = await waitUntil("the job finished here", () => api.getState(), (s) => !runningHere(jobId)(s) && s.contribution.succeeded > doneBefore, JOB_TIMEOUT);
    assert.equal(done.contribution.succeeded, doneBefore + 1);
    assert.ok(done.contribution.busyMs > 0, "no busy time was counted for the job");
    const onFarm = await getJob(jobId);
    assert.equal(onFarm.status, "succeeded");
    assert.deepEqual(onFarm.result, { n: N, count: PRIMES_BELOW_N });
  });

  it("farmhand.snooze pauses donating with a \"snoozed until\" reason; switching off and on again ends the snooze", async () => {
    await startDonating();
    await vscode.commands.executeCommand("farmhand.snooze");
    const paused = await waitUntil("paused by the snooze", () => api.getState(), (s) => s.status.kind === "paused", 5_000);
    assert.match(paused.status.reason ?? "", /^snoozed until \d{1,2}:\d{2}/);
    assert.equal(paused.donating, false);
    assert.equal(paused.wanted, true, "a snooze must not switch donating off");

    await vscode.commands.executeCommand("farmhand.toggle"); // off: forgets the snooze
    await waitUntil("off", () => api.getState(), (s) => s.status.kind === "off");
    await startDonating();
  });

  it("farmhand.finishAndStop lets the running job finish, starts no new one, then switches donating off", async () => {
    await startDonating();
    const first = await submitPrimes(N);
    await waitUntil("the first job running here", () => api.getState(), (s) => runningHere(first)(s) !== undefined, JOB_TIMEOUT);

    const finishing = Promise.resolve(vscode.commands.executeCommand("farmhand.finishAndStop"));
    assert.ok(runningHere(first)(api.getState()), "the job ended before finish-and-stop was asked for: the test proves nothing");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The worker has a free slot, but a draining worker must not take this one.
    const second = await submitPrimes(1_000);
    await finishing;

    const state = api.getState();
    assert.equal(state.wanted, false, "donating is still switched on after finish-and-stop");
    assert.equal(state.donating, false);
    assert.equal(state.status.kind, "off");
    assert.deepEqual(state.jobs, []);
    const firstOnFarm = await getJob(first);
    assert.equal(firstOnFarm.status, "succeeded", "the running job was not allowed to finish");
    assert.deepEqual(firstOnFarm.result, { n: N, count: PRIMES_BELOW_N });
    assert.equal((await getJob(second)).status, "pending", "a job submitted while draining was started");
  });
});
