import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Freezer, Handler } from "../../../extension/worker/handler";
import { Worker, type WorkerOptions } from "../../../extension/worker/worker";
import { deferred, ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

/** A handler that runs until released and offers a freezer that records what the engine did with it. */
function freezable(type = "work") {
  const gate = deferred<unknown>();
  const log: string[] = [];
  const freezer: Freezer = { freeze: () => log.push("freeze"), thaw: () => log.push("thaw") };
  const h: Handler = handler(type, (_p, ctx) => {
    ctx.setFreezer?.(freezer);
    ctx.signal.addEventListener("abort", () => gate.reject(new Error("aborted")));
    return gate.promise;
  });
  return { handler: h, gate, log };
}

/** A handler whose job cannot be frozen (it offers no freezer, like an Ollama request or any job on Windows). */
function unfreezable(type = "remote") {
  return handler(type, (_p, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")))));
}

function makeWorker(farm: ScriptedFarm, handlers: Handler[], options: Partial<WorkerOptions> = {}) {
  const worker = new Worker({ client: farm, handlers: handlersOf(...handlers), graceMs: 1_000, ...options });
  const finished: Array<{ jobId: string; outcome: string }> = [];
  const held: string[][] = [];
  worker.on("jobFinished", (e) => finished.push(e));
  worker.on("suspension", (e) => held.push(e.held));
  return { worker, finished, held };
}

/** A worker running one freezable job, frozen for `frozenMs` under a suspend limit of `limitMs`. */
async function frozenFor(frozenMs: number, limitMs: number) {
  const farm = new ScriptedFarm();
  const { worker, finished } = makeWorker(farm, [freezable().handler], { suspendLimitMs: limitMs });
  farm.offer("work");
  await worker.start();
  await tick();
  worker.pause("you are using the computer", { suspend: true });
  await tick(frozenMs);
  return { farm, worker, finished };
}

const heartbeats = (farm: ScriptedFarm) => farm.calls.filter((c) => c.name === "heartbeat").map((c) => c.args);

describe("Worker suspension (the machine's owner is back)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("freezes running jobs in place, says so in its heartbeats, and thaws them on resume", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker, held, finished } = makeWorker(farm, [job.handler]);
    farm.offer("work", {}, 6_000);
    await worker.start();
    await tick();
    expect(worker.snapshot().running).toHaveLength(1);

    vi.setSystemTime(1_000_000);
    worker.pause("you are using the computer", { suspend: true });
    await tick();
    expect(job.log).toEqual(["freeze"]);
    expect(worker.state).toBe("paused");
    const snap = worker.snapshot();
    expect(snap.suspended).toBe(true);
    expect(snap.running).toEqual([expect.objectContaining({ jobId: "job1", suspendedSince: 1_000_000 })]);
    expect(held).toEqual([["job1"]]);
    // One heartbeat at once to say so, then the usual rhythm, each one saying it is suspended: the lease is kept.
    expect(heartbeats(farm)).toEqual([[farm.leaseOf("job1"), undefined, undefined, true]]);
    await tick(2_000);
    expect(heartbeats(farm)).toHaveLength(2);
    expect(heartbeats(farm).every((args) => args[3] === true)).toBe(true);
    // Paused: it takes nothing new, and told the server so.
    expect(farm.calls.filter((c) => c.name === "ready").at(-1)?.args[1]).toBe(0);

    worker.resume();
    await tick();
    expect(job.log).toEqual(["freeze", "thaw"]);
    expect(worker.snapshot().suspended).toBe(false);
    expect(worker.snapshot().running[0].suspendedSince).toBeUndefined();
    expect(heartbeats(farm).at(-1)).toEqual([farm.leaseOf("job1"), undefined, undefined]);
    job.gate.resolve("done");
    await tick();
    await tick();
    expect(finished).toEqual([expect.objectContaining({ jobId: "job1", outcome: "succeeded" })]);
    await worker.stop();
  });

  it("gives back at once the jobs that cannot be frozen, and freezes the others", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker, finished } = makeWorker(farm, [job.handler, unfreezable()], { concurrency: 2 });
    farm.offer("work");
    farm.offer("remote");
    await worker.start();
    await tick();
    expect(worker.snapshot().running).toHaveLength(2);
    worker.pause("on battery power", { suspend: true });
    await tick();
    await tick();
    expect(farm.released).toEqual(["job2"]);
    expect(finished).toEqual([expect.objectContaining({ jobId: "job2", outcome: "released" })]);
    // Released while paused: the server is told this engine takes nothing more, so the job goes elsewhere.
    expect(farm.calls.find((c) => c.name === "release")?.args[1]).toBe(0);
    expect(job.log).toEqual(["freeze"]);
    expect(worker.snapshot().running.map((r) => r.jobId)).toEqual(["job1"]);
    await worker.stop();
  });

  it("gives back a job frozen longer than the suspend limit", async () => {
    const { farm, worker, finished } = await frozenFor(59_999, 60_000);
    expect(farm.released).toEqual([]);
    await tick(1);
    await tick();
    expect(farm.released).toEqual(["job1"]);
    expect(finished).toEqual([expect.objectContaining({ jobId: "job1", outcome: "released" })]);
    expect(worker.snapshot()).toMatchObject({ running: [], suspended: true, state: "paused" });
    await worker.stop();
  });

  it("a changed suspend limit holds jobs frozen now, counted from when they froze", async () => {
    // lowered from an hour to a minute after 30 s frozen: 30 s are left, not a fresh minute
    const { farm, worker } = await frozenFor(30_000, 60 * 60_000);
    worker.setSuspendLimit(60_000);
    await tick(29_999);
    expect(farm.released).toEqual([]);
    await tick(1);
    await tick();
    expect(farm.released).toEqual(["job1"]);
    await worker.stop();
  });

  it("a suspend limit lowered below the time a job has been frozen gives it back at once", async () => {
    const { farm, worker } = await frozenFor(10_000, 60 * 60_000);
    expect(farm.released).toEqual([]);
    worker.setSuspendLimit(5_000);
    await tick();
    expect(farm.released).toEqual(["job1"]);
    await worker.stop();
  });

  it("a thaw before the limit cancels it; the job's time limit does not run while it is frozen", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const timed = { ...job.handler, timeoutMs: 20_000 };
    const { worker } = makeWorker(farm, [timed], { suspendLimitMs: 60_000 });
    farm.offer("work");
    await worker.start();
    await tick(10_000);
    worker.pause("you are using the computer", { suspend: true });
    await tick(50_000);
    worker.resume();
    await tick(9_999);
    expect(farm.failed).toEqual([]);
    expect(farm.released).toEqual([]);
    await tick(1);
    await tick();
    expect(farm.failed).toEqual([expect.objectContaining({ jobId: "job1", error: "job timed out after 20000 ms and was stopped" })]);
    await worker.stop();
  });

  it("pausing again for the owner changes nothing and says nothing more", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker, held } = makeWorker(farm, [job.handler]);
    farm.offer("work");
    await worker.start();
    await tick();
    worker.pause("you are using the computer (starts after 5 idle min)", { suspend: true });
    worker.pause("you are using the computer (starts after 5 idle min)", { suspend: true });
    worker.pause("other programs are busy (90 % CPU)", { suspend: true });
    await tick();
    expect(job.log).toEqual(["freeze"]);
    expect(held).toEqual([["job1"]]);
    expect(heartbeats(farm)).toHaveLength(1);
    worker.resume();
    expect(held).toEqual([["job1"], []]);
    await worker.stop();
  });

  it("a plain pause (snooze) thaws frozen jobs: they go on at low priority, as before", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker } = makeWorker(farm, [job.handler]);
    farm.offer("work");
    await worker.start();
    await tick();
    worker.pause("you are using the computer", { suspend: true });
    worker.pause("snoozed until 18:00");
    expect(job.log).toEqual(["freeze", "thaw"]);
    expect(worker.state).toBe("paused");
    expect(worker.snapshot().suspended).toBe(false);
    await worker.stop();
  });

  it("a job whose claim lands after the suspension is given back, not started", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker } = makeWorker(farm, [job.handler]);
    await worker.start();
    await tick();
    // a claim in flight when the owner comes back
    const claimed = deferred();
    const claim = farm.claim.bind(farm);
    farm.claim = async (args) => {
      await claimed.promise;
      return claim(args);
    };
    farm.offer("work");
    await tick();
    worker.pause("you are using the computer", { suspend: true });
    claimed.resolve();
    await tick();
    await tick();
    expect(farm.released).toEqual(["job1"]);
    expect(job.log).toEqual([]);
    await worker.stop();
  });

  it("stop gives frozen jobs back", async () => {
    const farm = new ScriptedFarm();
    const job = freezable();
    const { worker, finished } = makeWorker(farm, [job.handler]);
    farm.offer("work");
    await worker.start();
    await tick();
    worker.pause("you are using the computer", { suspend: true });
    await worker.stop({ kind: "user", detail: "window closing" });
    expect(farm.released).toEqual(["job1"]);
    expect(finished.map((f) => f.outcome)).toEqual(["released"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
