import { afterEach, describe, expect, it } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { convexFarmClient, decorate, type CallName, type FarmClient } from "../../extension/worker/farmClient";
import type { HandlerSource } from "../../extension/worker/handler";
import { Worker, type WorkerOptions } from "../../extension/worker/worker";
import { api } from "../../convex/_generated/api";
import { connect, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

/** In-process handlers (no child processes: these tests are about what the engine says, not how jobs run). */
const HANDLERS: HandlerSource = {
  get: (type) =>
    type === "demo.echo" ? { type, run: (payload) => Promise.resolve(payload) } : type === "test.hangs" ? { type, run: () => new Promise<never>(() => undefined) } : undefined,
  capabilities: () => Promise.resolve(["demo.echo", "test.hangs"]),
};

function engine(farm: Farm, client: FarmClient, options: Partial<WorkerOptions>): Worker {
  const worker = new Worker({ client, handlers: HANDLERS, graceMs: 100, ...options });
  farm.workers.push(worker);
  return worker;
}

/**
 * The engine against the server's real offer rules (moved here from the unit layer, whose fake farm re-implemented
 * them): what it sends, and what the server then records for it.
 */
function recorded(farm: Farm, index: number) {
  const calls: Array<{ name: CallName; args: Record<string, unknown> }> = [];
  const client: FarmClient = decorate(convexFarmClient(connect(farm), farm.seeded.workerKeys[index]), {
    args: (name, args) => (calls.push({ name, args }), args),
  });
  const sent = (...names: CallName[]) => calls.filter((c) => names.includes(c.name));
  return { client, calls, sent };
}

/** How many more jobs the server wants offered to this worker (its waiting row). */
async function wants(farm: Farm, workerId: Id<"workers">): Promise<number> {
  return farm.server.t.run(async (ctx) => {
    const row = await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).unique();
    return row?.wants ?? 0;
  });
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(25);
  }
}

describe("the engine under the server's offer rules", () => {
  let farm: Farm;
  afterEach(async () => {
    await stopFarm(farm);
  });

  it("after work, idles again without another call: the completion said how many jobs it runs", async () => {
    farm = await startFarm(1, 4);
    const { client, sent, calls } = recorded(farm, 0);
    const worker = engine(farm, client, { onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 1, "waiting after the first claim");
    const [id] = await submit(farm, [{ type: "demo.echo", payload: 1 }]);
    await waitForJobs(farm, [id]);
    expect(sent("claim", "ready", "complete").map((c) => [c.name, c.args.max ?? c.args.slots])).toEqual([
      ["claim", 1], // at start: reads the lane heads, finds nothing, is recorded as waiting
      ["claim", 1], // the offer the doorbell showed
      ["complete", 1], // says it runs one job at once: the server records it waiting again
    ]);
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 1, "waiting again after the job");
    const before = calls.length;
    await sleep(500);
    expect(calls.length).toBe(before);
  });

  it("claims exactly the offers its doorbell shows, never reading the queue again and never declaring", async () => {
    farm = await startFarm(1, 4);
    const { client, sent } = recorded(farm, 0);
    const worker = engine(farm, client, { concurrency: 2, onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 2, "waiting for two");
    const ids = await submit(farm, Array.from({ length: 10 }, (_, i) => ({ type: "demo.echo", payload: i })));
    const rows = await waitForJobs(farm, ids);
    expect(rows.map((r) => r.status)).toEqual(Array(10).fill("succeeded"));
    const claims = sent("claim").slice(1);
    expect(claims.length).toBeGreaterThan(0);
    expect(claims.every((c) => (c.args.max as number) <= 2)).toBe(true);
    expect(sent("ready")).toEqual([]);
  });

  it("a lowered concurrency is declared, and the server offers nothing beyond it", async () => {
    farm = await startFarm(1, 4);
    const { client, sent } = recorded(farm, 0);
    const worker = engine(farm, client, { concurrency: 3, onlyCapabilities: ["test.hangs"] });
    await worker.start();
    await submit(farm, [{ type: "test.hangs" }]);
    await until(() => worker.snapshot().running.length === 1, "the first job running");
    worker.setConcurrency(1);
    await until(() => sent("ready").length === 1, "the declaration");
    expect(sent("ready")[0].args).toEqual({ capabilities: ["test.hangs"], slots: 1 });
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 0, "wanting nothing more");
    const [second] = await submit(farm, [{ type: "test.hangs" }]);
    await sleep(500);
    expect(worker.snapshot().running).toHaveLength(1);
    expect((await jobsOf(farm, [second]))[0].status).toBe("pending");
  });

  it("a raised concurrency is declared, and the server offers the new slots", async () => {
    farm = await startFarm(1, 4);
    const { client, sent } = recorded(farm, 0);
    const worker = engine(farm, client, { concurrency: 1, onlyCapabilities: ["test.hangs"] });
    await worker.start();
    await submit(farm, Array.from({ length: 4 }, () => ({ type: "test.hangs" })));
    await until(() => worker.snapshot().running.length === 1, "the first job running");
    await sleep(300);
    expect(worker.snapshot().running).toHaveLength(1);
    worker.setConcurrency(3);
    await until(() => worker.snapshot().running.length === 3, "three jobs running");
    expect(sent("ready").map((c) => c.args)).toEqual([{ capabilities: ["test.hangs"], slots: 3 }]);
  });

  it("paused, it is offered nothing; resumed, it claims in full and runs what waited", async () => {
    farm = await startFarm(1, 4);
    const { client, sent } = recorded(farm, 0);
    const worker = engine(farm, client, { concurrency: 2, onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 2, "waiting for two");
    worker.pause("user");
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 0, "wanting nothing while paused");
    const [id] = await submit(farm, [{ type: "demo.echo", payload: 1 }]);
    await sleep(500);
    expect((await jobsOf(farm, [id]))[0].status).toBe("pending");
    expect(sent("claim")).toHaveLength(1);
    worker.resume();
    await waitForJobs(farm, [id]);
    expect(sent("claim").map((c) => c.args.max)).toEqual([2, 2]); // at start, and in full on resuming
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 2, "waiting for two again");
  });

  it("a clean stop takes it out of the waiting lines at once", async () => {
    farm = await startFarm(1, 4);
    const { client, sent } = recorded(farm, 0);
    const worker = engine(farm, client, { concurrency: 2, onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 2, "waiting for two");
    await worker.stop();
    expect(sent("ready").map((c) => c.args)).toEqual([{ capabilities: ["demo.echo"], slots: 0, stopping: true }]);
    expect(await wants(farm, farm.seeded.workerIds[0])).toBe(0);
    const [id] = await submit(farm, [{ type: "demo.echo", payload: 1 }]);
    await sleep(300);
    expect((await jobsOf(farm, [id]))[0].status).toBe("pending");
  });

  it("a delayed job arrives as an offer once due: the idle engine keeps no timer for it and makes no call meanwhile", async () => {
    farm = await startFarm(1, 4);
    const { client, calls } = recorded(farm, 0);
    const worker = engine(farm, client, { onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 1, "waiting");
    const submitted = Date.now();
    const [id] = await connect(farm).mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs: [{ type: "demo.echo", payload: 7, delayMs: 1_000 }] });
    await sleep(500);
    expect(calls.map((c) => c.name)).toEqual(["claim"]);
    await waitForJobs(farm, [id]);
    expect(Date.now() - submitted).toBeGreaterThanOrEqual(1_000);
    expect(calls.map((c) => c.name)).toEqual(["claim", "claim", "complete"]);
  });

  it("an instance whose job still waits for others (complete answers pending) ends like any completion: slot freed, lease never used again", async () => {
    farm = await startFarm(2, 4);
    const { client, calls, sent } = recorded(farm, 0);
    const answers: unknown[] = [];
    const complete = client.complete;
    client.complete = async (args) => {
      const answer = await complete(args);
      answers.push(answer);
      return answer;
    };
    const worker = engine(farm, client, { onlyCapabilities: ["demo.echo"] });
    await worker.start();
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 1, "waiting");
    const farmClient = connect(farm);
    const [id] = await farmClient.mutation(api.jobs.submitBatch, { clientKey: farm.seeded.clientKey, jobs: [{ type: "demo.echo", payload: 5, validation: { quorum: 2 } }] });
    await until(() => answers.length === 1, "the instance's completion");
    expect(answers).toEqual([{ status: "pending" }]);
    await until(() => worker.snapshot().totals.succeeded === 1, "the run counted done");
    expect(worker.snapshot().running).toEqual([]);
    await until(async () => (await wants(farm, farm.seeded.workerIds[0])) === 1, "waiting again");
    expect((await jobsOf(farm, [id]))[0].status).toBe("pending");
    const leaseId = sent("complete")[0].args.leaseId;
    await sleep(300);
    const completed = calls.findIndex((c) => c.name === "complete");
    expect(calls.slice(completed + 1).filter((c) => c.args.leaseId === leaseId)).toEqual([]);
    // the other machine's instance agrees: the job succeeds
    const [lease] = await farmClient.mutation(api.workers.claim, { apiKey: farm.seeded.workerKeys[1], capabilities: ["demo.echo"] });
    expect(await farmClient.mutation(api.workers.complete, { apiKey: farm.seeded.workerKeys[1], leaseId: lease.leaseId, result: 5 })).toEqual({ status: "succeeded" });
  });
});
