import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it } from "vitest";
import { connect, engineWorker, eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await sleep(25);
  }
}

describe("cancel of a running job", () => {
  let farm: Farm;
  afterEach(async () => {
    await stopFarm(farm);
  });

  it("reaches the handler within one heartbeat, and the job ends canceled", async () => {
    farm = await startFarm(1, 2);
    const worker = engineWorker(farm, 0, { graceMs: 2_000 });
    const outcomes: string[] = [];
    worker.on("jobFinished", (e) => outcomes.push(e.outcome));
    let handlerStarted = false;
    worker.on("jobProgress", (e) => (handlerStarted ||= e.status === "waiting to be canceled"));
    await worker.start();
    const marker = join(mkdtempSync(join(tmpdir(), "farmhand-cancel-")), "aborted-at");
    const leaseMs = 6_000;
    const [id] = await submit(farm, [{ type: "test.waitsforabort", payload: { marker }, leaseMs }]);
    // The job code is running once it reported its first progress.
    await waitUntil(() => handlerStarted, 15_000);
    expect((await jobsOf(farm, [id]))[0].status).toBe("running");

    const canceledAt = Date.now();
    await connect(farm).mutation(anyApi.jobs.cancel, { clientKey: farm.seeded.clientKey, jobId: id });
    await waitUntil(() => existsSync(marker), leaseMs / 3 + 1_000);
    const abortSeenAt = Number(readFileSync(marker, "utf8"));
    expect(abortSeenAt - canceledAt).toBeLessThanOrEqual(leaseMs / 3);

    const [row] = await waitForJobs(farm, [id], 10_000);
    expect(row.status).toBe("canceled");
    // The server's state can land before the mutation's answer reaches the worker.
    await waitUntil(() => outcomes.length > 0, 5_000);
    expect(outcomes).toEqual(["canceled"]);
    const kinds = (await eventsOf(farm, [id])).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(["claimed", "cancel-requested", "canceled"]));
    expect(kinds).not.toContain("done");
    expect(worker.state).toBe("running");
  });
});
