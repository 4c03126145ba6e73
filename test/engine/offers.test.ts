import { ConvexClient } from "convex/browser";
import { afterEach, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { TIMING } from "../../convex/core/limits";
import { convexFarmClient, type FarmClient } from "../../extension/worker/farmClient";
import { Worker } from "../../extension/worker/worker";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { CutProxy } from "./cutProxy";
import { connect, engineWorker, eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";
import { createBuiltinRegistry } from "../../extension/handlers";

/** Every call a worker's engine makes, by function. */
function counted(inner: FarmClient) {
  const calls = new Map<string, number>();
  const client = new Proxy(inner, {
    get(target, name: string) {
      const value = (target as unknown as Record<string, unknown>)[name];
      if (typeof value !== "function" || name === "onConnectionChange") return value;
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client, calls };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** Waiting in the server's lines (its first claim found nothing). */
async function waiting(farm: Farm, workerId: Id<"workers">): Promise<boolean> {
  return await farm.server.t.run(async (ctx) => {
    const row = await ctx.db.query("waiters").withIndex("by_worker", (q) => q.eq("workerId", workerId)).unique();
    return (row?.wants ?? 0) > 0;
  });
}

describe("offers", () => {
  let farm: Farm;
  let cli: CliRun | undefined;
  const extra: Array<() => unknown> = [];
  const beforeStop: Array<() => unknown> = [];
  afterEach(async () => {
    if (cli && cli.child.exitCode === null) cli.child.kill("SIGKILL");
    cli = undefined;
    for (const restore of beforeStop.splice(0)) restore();
    await stopFarm(farm);
    for (const close of extra.splice(0)) await close();
  });

  it("reach only the worker that can run the job; the idle others make no call", async () => {
    farm = await startFarm(3, 1);
    const engines = [0, 1, 2].map((i) => {
      const { registry, pool } = createBuiltinRegistry({ ollama: false });
      farm.closers.push(() => pool.close());
      const { client, calls } = counted(convexFarmClient(connect(farm), farm.seeded.workerKeys[i]));
      const worker = new Worker({ client, handlers: registry, onlyCapabilities: i === 2 ? ["demo.primes"] : ["demo.echo"] });
      farm.workers.push(worker);
      return { worker, calls };
    });
    await Promise.all(engines.map((e) => e.worker.start()));
    for (const id of farm.seeded.workerIds) await until(() => waiting(farm, id), 10_000, "every engine waits");
    const before = engines.map((e) => new Map(e.calls));
    const [primes] = await submit(farm, [{ type: "demo.primes", payload: { n: 1000 }, requiredCapabilities: ["demo.primes"] }]);
    const [row] = await waitForJobs(farm, [primes], 20_000);
    expect(row).toMatchObject({ status: "succeeded", workerId: farm.seeded.workerIds[2] });
    await sleep(500);
    const delta = engines.map((e, i) => [...e.calls].filter(([name, n]) => n !== (before[i].get(name) ?? 0)).map(([name]) => name).sort());
    expect(delta[0]).toEqual([]);
    expect(delta[1]).toEqual([]);
    expect(delta[2]).toEqual(["claim", "complete"]);
  });

  it("an offer to a SIGKILLed worker passes to another waiting worker once its TTL is out", async () => {
    farm = await startFarm(2, 1);
    cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--concurrency", "1"]);
    await waitForLine(cli, /working on/);
    await until(() => waiting(farm, farm.seeded.workerIds[0]), 10_000, "the CLI worker waits");
    const survivor = engineWorker(farm, 1);
    const started = new Map<string, number>();
    survivor.on("jobStarted", (e) => started.set(e.jobId, Date.now()));
    await survivor.start();
    await until(() => waiting(farm, farm.seeded.workerIds[1]), 10_000, "the survivor waits");
    cli.child.kill("SIGKILL");
    expect(await cli.exited).toBeNull();
    const submittedAt = Date.now();
    const [id] = await submit(farm, [{ type: "demo.echo", payload: { n: 1 } }]);
    // the oldest waiter (the dead CLI worker) gets the offer first
    await until(async () => (await eventsOf(farm, [id])).some((e) => e.kind === "offer-expired"), 20_000, "the offer expires");
    const [row] = await waitForJobs(farm, [id], 20_000);
    expect(row).toMatchObject({ status: "succeeded", workerId: farm.seeded.workerIds[1], attempt: 1 });
    const expired = (await eventsOf(farm, [id])).find((e) => e.kind === "offer-expired")!;
    expect(expired.workerId).toBe(farm.seeded.workerIds[0]);
    expect(started.get(id)! - submittedAt).toBeGreaterThanOrEqual(TIMING.offerTtlMs - 100);
    // the dead worker is out of the waiting lines: the next job goes straight to the survivor
    const [next] = await submit(farm, [{ type: "demo.echo", payload: { n: 2 } }]);
    expect((await waitForJobs(farm, [next], 20_000))[0].workerId).toBe(farm.seeded.workerIds[1]);
    expect((await eventsOf(farm, [next])).map((e) => e.kind)).not.toContain("offer-expired");
  });

  it("an offer to a disconnected worker passes on; back online, the worker declares itself again and gets work", async () => {
    farm = await startFarm(2, 1);
    connect(farm); // the submitter's client, not behind the proxy
    const proxy = await CutProxy.start(farm.server.url);
    beforeStop.push(() => proxy.restore());
    extra.push(() => proxy.close());
    const offline = new ConvexClient(proxy.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
    farm.clients.push(offline);
    const { registry, pool } = createBuiltinRegistry({ ollama: false });
    farm.closers.push(() => pool.close());
    const laptop = new Worker({ client: convexFarmClient(offline, farm.seeded.workerKeys[0]), handlers: registry });
    farm.workers.push(laptop);
    const connection: boolean[] = [];
    laptop.on("connection", (e) => connection.push(e.connected));
    await laptop.start();
    await until(() => waiting(farm, farm.seeded.workerIds[0]), 10_000, "the laptop waits");
    const desk = engineWorker(farm, 1);
    await desk.start();
    await until(() => waiting(farm, farm.seeded.workerIds[1]), 10_000, "the desk waits");

    proxy.disconnect();
    const [first] = await submit(farm, [{ type: "demo.echo", payload: { n: 1 } }]);
    const [row] = await waitForJobs(farm, [first], 20_000);
    expect(row.workerId).toBe(farm.seeded.workerIds[1]);
    expect((await eventsOf(farm, [first])).find((e) => e.kind === "offer-expired")?.workerId).toBe(farm.seeded.workerIds[0]);

    proxy.restore();
    // the client's reconnect backoff grew while it was refused: its next try may be many seconds away
    await until(() => connection.at(-1) === true && connection.includes(false), 60_000, "the laptop reconnects");
    await until(() => waiting(farm, farm.seeded.workerIds[0]), 20_000, "the laptop waits again");
    const both = await submit(farm, [
      { type: "demo.echo", payload: { n: 2, delayMs: 1_000 } },
      { type: "demo.echo", payload: { n: 3, delayMs: 1_000 } },
    ]);
    const rows = await waitForJobs(farm, both, 20_000);
    expect(rows.map((r) => r.workerId).sort()).toEqual([...farm.seeded.workerIds].sort());
  }, 150_000);

  it("a cancel reaches a running job through the doorbell, long before the next heartbeat", async () => {
    farm = await startFarm(1, 1);
    const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { graceMs: 500 } });
    farm.closers.push(() => pool.close());
    const { client, calls } = counted(convexFarmClient(connect(farm), farm.seeded.workerKeys[0]));
    const worker = new Worker({ client, handlers: registry, graceMs: 500 });
    farm.workers.push(worker);
    const outcomes: string[] = [];
    worker.on("jobFinished", (e) => outcomes.push(e.outcome));
    await worker.start();
    const leaseMs = 60_000; // the first heartbeat comes after 20 s
    const [id] = await submit(farm, [{ type: "demo.echo", payload: { delayMs: 50_000 }, leaseMs }]);
    await until(async () => (await jobsOf(farm, [id]))[0].status === "running" && worker.snapshot().running.length === 1, 15_000, "the job runs");
    const canceledAt = Date.now();
    await connect(farm).mutation(api.jobs.cancel, { clientKey: farm.seeded.clientKey, jobId: id });
    await until(() => outcomes.length > 0, 10_000, "the engine ends the job");
    expect(outcomes).toEqual(["canceled"]);
    expect(calls.get("heartbeat") ?? 0).toBe(0);
    expect(Date.now() - canceledAt).toBeLessThan(leaseMs / 3);
    expect((await waitForJobs(farm, [id], 10_000))[0].status).toBe("canceled");
  });
});
