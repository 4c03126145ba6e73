import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Worker } from "../../extension/worker/worker";
import { engineWorker, eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

const dir = mkdtempSync(join(tmpdir(), "farmhand-faults-"));
const badRecipe = join(dir, "bad.js");
writeFileSync(badRecipe, `console.log("working on it");console.log("all done, no JSON here");`);
const goodRecipe = join(dir, "good.js");
writeFileSync(
  goodRecipe,
  `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=JSON.parse(s);
   console.log(JSON.stringify({progress:0.5,status:"halfway"}));console.log("thinking about " + a.word);
   setTimeout(()=>console.log(JSON.stringify({upper:a.word.toUpperCase()})),2500);});`,
);

describe("handlers good and bad: every job ends cleanly and the worker goes on", () => {
  let farm: Farm;
  let worker: Worker;
  const finished: Array<{ jobId: string; outcome: string; error?: string }> = [];

  beforeAll(async () => {
    farm = await startFarm(1, 4);
    worker = engineWorker(farm, 0, {
      concurrency: 4,
      fixtureTimeoutMs: 8_000,
      graceMs: 300,
      maxConsecutiveFailures: 100,
      recipes: [
        { name: "bad-output", command: process.execPath, args: [badRecipe] },
        { name: "shout", command: process.execPath, args: [goodRecipe] },
      ],
    });
    worker.on("jobFinished", (e) => finished.push(e));
    await worker.start();
  });
  afterAll(async () => {
    await stopFarm(farm);
  });

  it("a handler that throws fails its job, which is retried and then dead", async () => {
    const [id] = await submit(farm, [{ type: "test.throws", maxAttempts: 2, leaseMs: 10_000 }]);
    const [row] = await waitForJobs(farm, [id], 20_000);
    expect(row).toMatchObject({ status: "dead", attempt: 2, error: "this handler always throws" });
    const kinds = (await eventsOf(farm, [id])).map((e) => e.kind);
    expect(kinds.filter((k) => k === "failed")).toHaveLength(2);
    expect(kinds).toContain("retried");
  });

  it("a handler that kills its own process fails its job; the next job runs", async () => {
    const [crash, echo] = await submit(farm, [
      { type: "test.killsitself", maxAttempts: 1 },
      { type: "demo.echo", payload: { after: "crash" } },
    ]);
    const [crashed, ok] = await waitForJobs(farm, [crash, echo]);
    expect(crashed).toMatchObject({ status: "dead", error: "the handler's process exited unexpectedly (signal SIGKILL)" });
    expect(ok).toMatchObject({ status: "succeeded", result: { after: "crash" } });
  });

  it("a handler that hangs past its lease keeps its lease while alive, then times out and is failed", async () => {
    const [id] = await submit(farm, [{ type: "test.hangs", leaseMs: 5_000, maxAttempts: 3 }]);
    const [row] = await waitForJobs(farm, [id], 20_000);
    expect(row).toMatchObject({ status: "dead", attempt: 1, error: "job timed out after 8000 ms and was stopped" });
    const events = await eventsOf(farm, [id]);
    expect(events.map((e) => e.kind)).not.toContain("heartbeat-expired");
    const claimed = events.find((e) => e.kind === "claimed")!.at;
    const dead = events.find((e) => e.kind === "dead")!.at;
    expect(dead - claimed).toBeGreaterThanOrEqual(8_000);
  });

  it("a recipe gets its args on stdin; its progress, output and result reach the server", async () => {
    const [id] = await submit(farm, [{ type: "recipe.shout", payload: { word: "hello" }, leaseMs: 5_000 }]);
    let sawProgress = false;
    for (let i = 0; i < 100 && !sawProgress; i++) {
      const [row] = (await jobsOf(farm, [id])) as Array<{ progress?: number; statusText?: string }>;
      sawProgress = row.progress === 0.5 && row.statusText === "halfway";
      await sleep(50);
    }
    expect(sawProgress).toBe(true);
    const [row] = await waitForJobs(farm, [id]);
    expect(row).toMatchObject({ status: "succeeded", result: { upper: "HELLO" } });
    const output = await farm.server.t.run(async (ctx) =>
      (await ctx.db.query("jobOutput").withIndex("by_job_seq", (q) => q.eq("jobId", id)).collect()).map((c) => c.chunk).join(""),
    );
    expect(output).toBe("thinking about hello\n");
  });

  it("a recipe whose last line is not JSON fails clearly, without retry", async () => {
    const [id] = await submit(farm, [{ type: "recipe.bad-output", payload: { x: 1 }, maxAttempts: 3 }]);
    const [row] = await waitForJobs(farm, [id]);
    expect(row).toMatchObject({
      status: "dead",
      attempt: 1,
      error: 'recipe "bad-output" must print its result as JSON on its last line of output; it printed "all done, no JSON here"',
    });
  });

  it("an oversized result fails the job with a clear non-retryable error", async () => {
    const [id] = await submit(farm, [{ type: "test.bigresult", payload: { bytes: 300_000 }, maxAttempts: 3 }]);
    const [row] = await waitForJobs(farm, [id]);
    expect(row).toMatchObject({ status: "dead", attempt: 1, error: "result is 300002 bytes, over the 262144-byte limit" });
  });

  it("a job type no worker handles is never handed to this worker: it waits, untouched, not failed", async () => {
    const [id] = await submit(farm, [{ type: "nobody.handles.this", maxAttempts: 1 }]);
    const [echo] = await submit(farm, [{ type: "demo.echo", payload: { after: "unknown" } }]);
    expect((await waitForJobs(farm, [echo]))[0]).toMatchObject({ status: "succeeded" });
    await sleep(500);
    expect((await jobsOf(farm, [id]))[0]).toMatchObject({ status: "pending", attempt: 0 });
    expect(finished.some((e) => e.jobId === id)).toBe(false);
  });

  it("the worker is still running after all of that", async () => {
    expect(worker.state).toBe("running");
    const [id] = await submit(farm, [{ type: "demo.primes", payload: { n: 100_000 } }]);
    const [row] = await waitForJobs(farm, [id]);
    expect(row).toMatchObject({ status: "succeeded", result: { n: 100_000, count: 9_592 } });
  });
});
