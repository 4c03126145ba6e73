import { expect, test } from "vitest";
import { api } from "../../../convex/_generated/api";
import { measure } from "../metrics";
import { enrollWorker, newFarm } from "../setup";

/**
 * The metrics cost a plain job no write of its own: what a job tells them rides on the counter changes its submit,
 * claim and end insert anyway. The documents each step writes, measured before the metrics existed (this test on the
 * code of c253d49): submit 4, claim 5, complete 10. A completion has since written one more of its own, the worker's
 * credit row of the week (creditWeeks, the week's exact leaderboard), which the metrics have nothing to do with.
 */
const BEFORE = { submit: 4, claim: 5, complete: 10 };
const WEEK_ROW = 1;

test("a plain job's submit, claim and completion write as many documents as before the metrics", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const steps = async () => {
    const submit = await measure(farm.t, "mutation", api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const claim = await measure(farm.t, "mutation", api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
    const complete = await measure(farm.t, "mutation", api.workers.complete, { apiKey: w.apiKey, leaseId: claim.result[0].leaseId, result: 1 });
    return { submit: submit.usage.documentsWritten, claim: claim.usage.documentsWritten, complete: complete.usage.documentsWritten };
  };
  await steps(); // the first job makes its lane, the worker's rows and the summary's state
  expect(await steps()).toEqual({ ...BEFORE, complete: BEFORE.complete + WEEK_ROW });
});
