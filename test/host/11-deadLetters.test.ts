// Deleting a dead letter asks first: declined, the dead letter stays; confirmed, it is gone. (An operator's machine:
// the enrollment may manage the farm.)
import * as assert from "node:assert/strict";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, answeringWarnings, testFarm, waitUntil, type FarmhandApi } from "./farmhand";
import { getJob, submitJob } from "./farmClient";

type Claimed = Array<{ jobId: string; leaseId: string }>;

describe("deleting a dead letter asks first", function () {
  this.timeout(120_000);
  let api: FarmhandApi;
  const farm = () => new ConvexHttpClient(testFarm().url);

  /** A dead letter made by hand: the shared test worker claims a job and fails it for good. */
  async function deadLetter(): Promise<string> {
    const jobId = await submitJob("demo.echo", { text: "to be failed" });
    const apiKey = testFarm().workerKey;
    // Every waiting demo.echo job at once (earlier suites may have left some): ours is failed, the others go back.
    const claimed = await waitUntil(
      "the test worker's claim of the job",
      async () => (await farm().mutation(anyApi.workers.claim, { apiKey, capabilities: ["demo.echo"], max: 32 })) as Claimed,
      (c) => c.length > 0,
      20_000,
    );
    const mine = claimed.find((c) => c.jobId === jobId);
    for (const other of claimed.filter((c) => c !== mine)) await farm().mutation(anyApi.workers.release, { apiKey, leaseId: other.leaseId });
    assert.ok(mine, `the claim did not hand over job ${jobId}`);
    await farm().mutation(anyApi.workers.fail, { apiKey, leaseId: mine.leaseId, error: "failed on purpose", retryable: false });
    assert.equal((await getJob(jobId)).status, "dead");
    return jobId;
  }

  /** Runs the delete command with the modal question answered `answer`; returns the questions asked. */
  const purgeAnswering = (jobId: string, answer: string | undefined) => answeringWarnings(answer, () => vscode.commands.executeCommand("farmhand.purgeDead", jobId));

  before(async () => {
    api = await activateFarmhand();
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    const token = process.env.FARMHAND_TEST_OPERATOR_TOKEN;
    assert.ok(token, "the runner passed no FARMHAND_TEST_OPERATOR_TOKEN");
    await vscode.commands.executeCommand("farmhand.join", { url: testFarm().url, token });
  });

  after(async () => {
    // Back on the shared test machine, for the checks after the suite.
    const { url, workerKey } = testFarm();
    await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
  });

  it("declined, the dead letter stays; confirmed, it is deleted", async () => {
    const jobId = await deadLetter();
    const declined = await purgeAnswering(jobId, undefined);
    assert.equal(declined.length, 1);
    assert.match(declined[0] ?? "", /^Delete this dead letter\?/);
    assert.equal((await getJob(jobId)).status, "dead");

    const confirmed = await purgeAnswering(jobId, "Delete");
    assert.equal(confirmed.length, 1);
    await waitUntil(
      "the dead letter gone",
      () => getJob(jobId).then(() => "still there", (error: unknown) => String(error)),
      (text) => text.includes("does not know"),
      10_000,
    );
  });
});
