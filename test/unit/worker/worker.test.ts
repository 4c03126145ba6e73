import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConvexError } from "convex/values";
import { abortReason, HandlerError } from "../../../extension/worker/errors";
import { TIMING } from "../../../convex/core/limits";
import { Worker, type WorkerOptions } from "../../../extension/worker/worker";
import { deferred, ScriptedFarm, handler, handlersOf, keyError } from "./scriptedFarm";

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

const echo = handler("demo.echo", (payload) => Promise.resolve(payload));

function makeWorker(farm: ScriptedFarm, options: Partial<WorkerOptions> = {}) {
  const worker = new Worker({ client: farm, handlers: handlersOf(echo), graceMs: 1_000, ...options });
  const finished: Array<{ jobId: string; outcome: string; error?: string }> = [];
  const states: string[] = [];
  worker.on("jobFinished", (e) => finished.push(e));
  worker.on("state", (e) => states.push(`${e.state}:${e.reason}`));
  return { worker, finished, states };
}

describe("Worker", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("idles with its doorbell and one presence call every 5 minutes, nothing else", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm);
    await worker.start();
    await tick();
    // one subscription, and one claim that finds nothing and so records the worker as waiting
    expect(farm.names()).toEqual(["doorbell", "claim"]);
    // (that the server then records it waiting is the server's rule: test/engine/engineRules.test.ts)
    expect(farm.calls[1].args).toEqual([["demo.echo"], 1]);
    expect(vi.getTimerCount()).toBe(1); // the presence timer
    await tick(TIMING.presenceEveryMs - 1);
    expect(farm.names()).toEqual(["doorbell", "claim"]);
    await tick(1);
    expect(farm.names()).toEqual(["doorbell", "claim", "presence"]);
    await tick(3 * TIMING.presenceEveryMs);
    expect(farm.names()).toEqual(["doorbell", "claim", "presence", "presence", "presence", "presence"]);
    expect(vi.getTimerCount()).toBe(1);
    expect(worker.snapshot().state).toBe("running");
    await worker.stop();
    expect(farm.doorbellCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("announces a job before any of its progress, output or end", async () => {
    const farm = new ScriptedFarm();
    const eager = handler("eager", (_p, ctx) => {
      ctx.progress(0.1, "at once");
      ctx.output("hi\n");
      return Promise.resolve(1);
    });
    const { worker } = makeWorker(farm, { handlers: handlersOf(eager) });
    const order: string[] = [];
    worker.on("jobStarted", () => order.push("started"));
    worker.on("jobProgress", () => order.push("progress"));
    worker.on("jobOutput", () => order.push("output"));
    worker.on("jobFinished", () => order.push("finished"));
    farm.offer("eager");
    await worker.start();
    await tick();
    await tick();
    expect(order).toEqual(["started", "progress", "output", "finished"]);
    await worker.stop();
  });

  it("claims up to its free slots, runs the handler and completes", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const slow = handler("slow", async (p) => {
      await gate.promise;
      return p;
    });
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(slow), concurrency: 2 });
    for (let i = 0; i < 3; i++) farm.offer("slow", { i });
    await worker.start();
    await tick();
    expect(farm.calls.find((c) => c.name === "claim")?.args[1]).toBe(2);
    expect(worker.snapshot().running).toHaveLength(2);
    gate.resolve();
    await tick();
    await tick();
    expect(farm.completed.map((c) => c.result)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(finished.every((f) => f.outcome === "succeeded")).toBe(true);
    expect(worker.snapshot().totals.succeeded).toBe(3);
    await worker.stop();
  });

  it("heartbeats every third of the lease with the latest progress", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const h = handler("p", async (_p, ctx) => {
      ctx.progress(0.5, "half way");
      await gate.promise;
      return 1;
    });
    const { worker } = makeWorker(farm, { handlers: handlersOf(h) });
    farm.offer("p", {}, 9_000);
    await worker.start();
    await tick(2_999);
    expect(farm.count("heartbeat")).toBe(0);
    await tick(1);
    expect(farm.count("heartbeat")).toBe(1);
    expect(farm.calls.find((c) => c.name === "heartbeat")?.args.slice(1)).toEqual([0.5, "half way"]);
    await tick(3_000);
    expect(farm.count("heartbeat")).toBe(2);
    gate.resolve();
    await tick();
    await tick(10_000);
    expect(farm.count("heartbeat")).toBe(2);
    await worker.stop();
  });

  it("fails a throwing job as retryable, and a HandlerError as it says", async () => {
    const farm = new ScriptedFarm();
    const boom = handler("boom", (p) =>
      Promise.reject((p as { final?: boolean }).final ? new HandlerError("bad input", { retryable: false }) : new Error("kaput")),
    );
    const { worker } = makeWorker(farm, { handlers: handlersOf(boom) });
    farm.offer("boom", {});
    farm.offer("boom", { final: true });
    await worker.start();
    await tick();
    await tick();
    expect(farm.failed).toEqual([
      { jobId: "job1", error: "kaput", retryable: true },
      { jobId: "job2", error: "bad input", retryable: false },
    ]);
    await worker.stop();
  });

  it("fails an unknown job type with a clear, retryable error and goes on", async () => {
    const farm = new ScriptedFarm();
    const { worker, finished } = makeWorker(farm);
    farm.offer("nope.never");
    farm.offer("demo.echo", "hi");
    await worker.start();
    await tick();
    await tick();
    expect(farm.failed).toEqual([{ jobId: "job1", error: 'no handler for job type "nope.never" on this worker', retryable: true }]);
    expect(farm.completed).toEqual([{ jobId: "job2", result: "hi" }]);
    expect(finished.map((f) => f.outcome)).toEqual(["failed", "succeeded"]);
    await worker.stop();
  });

  it("fails an oversized result with a non-retryable error instead of sending it", async () => {
    const farm = new ScriptedFarm();
    const big = handler("big", () => Promise.resolve("x".repeat(2_000)));
    const { worker } = makeWorker(farm, { handlers: handlersOf(big), maxResultBytes: 1_000 });
    farm.offer("big");
    await worker.start();
    await tick();
    await tick();
    expect(farm.count("complete")).toBe(0);
    expect(farm.failed).toEqual([{ jobId: "job1", error: "result is 2002 bytes, over the 1000-byte limit", retryable: false }]);
    await worker.stop();
  });

  it("aborts a job the server canceled (heartbeat answer) and ends it canceled", async () => {
    const farm = new ScriptedFarm();
    let aborted = false;
    const h = handler("long", (_p, ctx) => new Promise((_r, reject) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = true;
        reject(abortReason(ctx.signal));
      });
    }));
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(h) });
    farm.offer("long", {}, 6_000);
    await worker.start();
    await tick();
    farm.requestCancel("job1");
    await tick(2_000);
    expect(aborted).toBe(true);
    await tick();
    expect(finished).toEqual([expect.objectContaining({ jobId: "job1", outcome: "canceled" })]);
    expect(farm.failed).toEqual([{ jobId: "job1", error: "canceled while running", retryable: false }]);
    await worker.stop();
  });

  it("aborts a job canceled through its doorbell at once, long before the next heartbeat", async () => {
    const farm = new ScriptedFarm();
    const h = handler("long", (_p, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(abortReason(ctx.signal)))));
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(h) });
    farm.offer("long", {}, 60_000);
    await worker.start();
    await tick();
    expect(worker.snapshot().running).toHaveLength(1);
    farm.requestCancel("job1");
    await tick();
    expect(farm.count("heartbeat")).toBe(0);
    expect(finished[0]).toMatchObject({ outcome: "canceled" });
    expect(farm.failed).toEqual([{ jobId: "job1", error: "canceled while running", retryable: false }]);
    await worker.stop();
    expect(farm.doorbellCount).toBe(0);
  });

  it("drops a job quietly when its lease went stale", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    let signalled = false;
    const h = handler("long", async (_p, ctx) => {
      ctx.signal.addEventListener("abort", () => (signalled = true));
      await gate.promise;
      return "late";
    });
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(h) });
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    farm.offer("long", {}, 6_000);
    await worker.start();
    await tick();
    farm.expire("job1");
    await tick(2_000);
    expect(signalled).toBe(true);
    gate.resolve();
    await tick(1_000);
    expect(finished).toEqual([expect.objectContaining({ outcome: "lost" })]);
    expect(farm.count("complete") + farm.count("fail")).toBe(0);
    expect(errors).toEqual([]);
    expect(worker.state).toBe("running");
    await worker.stop();
  });

  it("stops with a clear reason when the key is revoked", async () => {
    const farm = new ScriptedFarm();
    const { worker, states } = makeWorker(farm);
    await worker.start();
    await tick();
    farm.doorbellError(keyError("revoked"));
    await tick();
    expect(worker.state).toBe("stopped");
    expect(states.at(-1)).toBe("stopped:this worker's key was revoked (revoked): Worker key revoked");
    expect(farm.count("ready")).toBe(0); // nothing more is said with a refused key
  });

  it("a completion refused for a revoked key is not reported as a success", async () => {
    const farm = new ScriptedFarm();
    farm.failNext.set("complete", keyError("revoked"));
    const { worker, finished } = makeWorker(farm);
    farm.offer("demo.echo");
    await worker.start();
    await tick();
    await tick();
    expect(finished).toEqual([expect.objectContaining({ outcome: "lost", error: "Worker key revoked" })]);
    expect(worker.snapshot().totals.succeeded).toBe(0);
    expect(worker.state).toBe("stopped");
  });

  it("stops when the server refuses its claim as invalid (e.g. a capability it does not accept)", async () => {
    const farm = new ScriptedFarm();
    farm.failNext.set("claim", new ConvexError({ code: "invalid_argument", message: 'capability "X" must match [a-z0-9:._-]{1,64}' }));
    const { worker } = makeWorker(farm);
    await worker.start();
    await tick();
    expect(worker.state).toBe("stopped");
    expect(worker.snapshot().reason).toBe(
      `the server refused this worker's claim (invalid_argument): capability "X" must match [a-z0-9:._-]{1,64}`,
    );
  });

  it("keeps going after a passing doorbell error", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm);
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    await worker.start();
    await tick();
    farm.doorbellError(new Error("query crashed"));
    farm.offer("demo.echo", 5);
    await tick();
    await tick();
    expect(errors).toEqual(["doorbell failed: query crashed"]);
    expect(farm.completed).toEqual([{ jobId: "job1", result: 5 }]);
    await worker.stop();
  });

  it("stops when a claim is refused for a bad key", async () => {
    const farm = new ScriptedFarm();
    farm.failNext.set("claim", keyError("bad_key"));
    const { worker } = makeWorker(farm);
    farm.offer("demo.echo");
    await worker.start();
    await tick();
    expect(worker.state).toBe("stopped");
    expect(worker.snapshot().reason).toMatch(/rejected this worker's key \(bad_key\)/);
  });

  it("retries a failed claim after a jittered backoff", async () => {
    const farm = new ScriptedFarm();
    farm.failNext.set("claim", new Error("server hiccup"));
    const { worker } = makeWorker(farm, { claimBackoffMs: 1_000 });
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    farm.offer("demo.echo", 1);
    await worker.start();
    await tick();
    expect(errors).toEqual(["claim failed: server hiccup"]);
    expect(farm.count("claim")).toBe(1);
    await tick(499);
    expect(farm.count("claim")).toBe(1);
    await tick(501);
    expect(farm.count("claim")).toBe(2);
    await tick();
    expect(farm.completed).toHaveLength(1);
    await worker.stop();
  });

  it("auto-pauses after N handler failures in a row and resumes on request", async () => {
    const farm = new ScriptedFarm();
    const boom = handler("boom", () => Promise.reject(new Error("no luck")));
    const { worker, states } = makeWorker(farm, { handlers: handlersOf(boom, echo), maxConsecutiveFailures: 3 });
    for (let i = 0; i < 4; i++) farm.offer("boom");
    farm.offer("demo.echo");
    await worker.start();
    for (let i = 0; i < 6; i++) await tick();
    expect(farm.failed).toHaveLength(3);
    expect(worker.state).toBe("paused");
    expect(states).toContain("paused:auto-paused after 3 failed jobs in a row (last: no luck)");
    worker.resume();
    for (let i = 0; i < 6; i++) await tick();
    expect(farm.failed).toHaveLength(4);
    expect(farm.completed).toHaveLength(1);
    await worker.stop();
  });

  it("pause keeps running jobs but takes no new ones", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const slow = handler("slow", async () => gate.promise);
    const { worker } = makeWorker(farm, { handlers: handlersOf(slow) });
    farm.offer("slow");
    farm.offer("slow");
    await worker.start();
    await tick();
    worker.pause("user");
    gate.resolve();
    await tick();
    await tick();
    expect(farm.completed).toHaveLength(1);
    expect(farm.count("claim")).toBe(1);
    worker.resume();
    await tick();
    await tick();
    expect(farm.completed).toHaveLength(2);
    await worker.stop();
  });

  it("drain finishes running jobs, then stops", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const slow = handler("slow", async () => gate.promise);
    const { worker, states } = makeWorker(farm, { handlers: handlersOf(slow) });
    farm.offer("slow");
    farm.offer("slow");
    await worker.start();
    await tick();
    const drained = worker.drain();
    expect(worker.state).toBe("draining");
    gate.resolve();
    await tick();
    await drained;
    expect(worker.state).toBe("stopped");
    expect(farm.completed).toHaveLength(1);
    expect(farm.queued).toHaveLength(1);
    expect(states.at(-1)).toBe("stopped:drained");
  });

  it("stop aborts running jobs and releases their leases at once", async () => {
    const farm = new ScriptedFarm();
    let signalled = false;
    const stubborn = handler("stubborn", (_p, ctx) => {
      ctx.signal.addEventListener("abort", () => (signalled = true));
      return new Promise(() => undefined);
    });
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(stubborn), concurrency: 2 });
    farm.offer("stubborn");
    farm.offer("stubborn");
    await worker.start();
    await tick();
    await worker.stop({ kind: "user", detail: "bye" });
    expect(signalled).toBe(true);
    expect(farm.released.sort()).toEqual(["job1", "job2"]);
    expect(finished.map((f) => f.outcome)).toEqual(["released", "released"]);
    expect(worker.snapshot()).toMatchObject({ state: "stopped", reason: "bye", running: [] });
    expect(farm.doorbellCount).toBe(0);
    // the releases said "take nothing more", and so did the last word on the way out
    expect(farm.calls.filter((c) => c.name === "release").map((c) => c.args[1])).toEqual([0, 0]);
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [["stubborn"], 0, true] });
  });

  it("fails a job that runs past its time limit, heartbeating until then", async () => {
    const farm = new ScriptedFarm();
    const hang = handler("hang", (_p, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("x")))), { timeoutMs: 20_000 });
    const { worker } = makeWorker(farm, { handlers: handlersOf(hang) });
    farm.offer("hang", {}, 6_000);
    await worker.start();
    await tick(19_999);
    expect(farm.count("heartbeat")).toBe(9);
    await tick(1);
    await tick();
    expect(farm.failed).toEqual([{ jobId: "job1", error: "job timed out after 20000 ms and was stopped", retryable: false }]);
  });

  it("raises concurrency at run time and claims the new slots", async () => {
    const farm = new ScriptedFarm();
    const slow = handler("slow", () => new Promise(() => undefined));
    const { worker } = makeWorker(farm, { handlers: handlersOf(slow) });
    for (let i = 0; i < 4; i++) farm.offer("slow");
    await worker.start();
    await tick();
    expect(worker.snapshot().running).toHaveLength(1);
    worker.setConcurrency(3);
    await tick();
    expect(worker.snapshot().running).toHaveLength(3);
    expect(() => worker.setConcurrency(0)).toThrow(/concurrency must be a whole number from 1 to 32, got 0/);
    expect(() => worker.setConcurrency(2.5)).toThrow(RangeError);
    expect(worker.concurrency).toBe(3);
    await worker.stop();
  });

  it("an offer it saw is not lost when its claim took a better one it had not seen yet", async () => {
    const farm = new ScriptedFarm();
    const slow = handler("slow", () => new Promise(() => undefined));
    const { worker } = makeWorker(farm, { handlers: handlersOf(slow), concurrency: 2 });
    await worker.start();
    await tick();
    const [best, seen] = farm.offerQuietly("slow", "slow");
    farm.ring({ offers: [{ jobId: seen, expiresAt: Date.now() + 5_000 }], cancel: [], resync: false });
    await tick();
    await tick();
    expect(worker.snapshot().running.map((r) => r.jobId).sort()).toEqual([best, seen].sort());
    expect(farm.offered).toEqual([]);
    await worker.stop();
  });

  it("keeps no wake-up timer for delayed jobs: a promoted job arrives as an offer", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm);
    await worker.start();
    await tick();
    expect(vi.getTimerCount()).toBe(1); // presence only
    await tick(10_000);
    farm.offer("demo.echo", 7); // the server promoted a delayed job and offered it
    await tick();
    await tick();
    expect(farm.completed).toEqual([{ jobId: "job1", result: 7 }]);
    await worker.stop();
  });

  it("a doorbell asking it to resync (an offer to it expired) makes one full claim", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm);
    await worker.start();
    await tick();
    farm.queue("demo.echo", 1); // offered, but the offer passed on before the engine claimed (say, it froze):
    farm.ring({ offers: [], cancel: [], resync: true }); // back at its lane's head, and this worker asked to resync
    await tick();
    await tick();
    // no offer to claim, yet a claim for every free slot: it reads the heads
    expect(farm.sent("claim")).toEqual([
      [["demo.echo"], 1],
      [["demo.echo"], 1],
    ]);
    expect(farm.completed).toEqual([{ jobId: "job1", result: 1 }]);
    await worker.stop();
  });

  it("after a reconnect it claims once in full: offline, it may have been taken out of the waiting lines", async () => {
    const farm = new ScriptedFarm();
    let notify: (connected: boolean) => void = () => undefined;
    farm.onConnectionChange = (cb) => {
      notify = cb;
      cb(true);
      return () => undefined;
    };
    const { worker } = makeWorker(farm);
    await worker.start();
    await tick();
    expect(farm.count("claim")).toBe(1);
    notify(false);
    notify(true);
    await tick();
    // no offer shown, yet it claims for its free slot: a full claim
    expect(farm.sent("claim")).toEqual([
      [["demo.echo"], 1],
      [["demo.echo"], 1],
    ]);
    await worker.stop();
  });

  it("a clean stop tells the farm it is stopping (slots 0), so the farm shows it offline at once; a pause does not", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm, { concurrency: 2 });
    await worker.start();
    await tick();
    worker.pause("user");
    await tick();
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [["demo.echo"], 0] });
    await worker.stop();
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [["demo.echo"], 0, true] });
  });

  it("pause and drain say it takes nothing more; resume claims in full again", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm, { concurrency: 2 });
    await worker.start();
    await tick();
    expect(farm.sent("claim")).toEqual([[["demo.echo"], 2]]);
    worker.pause("user");
    await tick();
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [["demo.echo"], 0] });
    farm.offer("demo.echo"); // an offer already on its way: a paused engine does not claim it
    await tick();
    expect(farm.completed).toHaveLength(0);
    expect(farm.count("claim")).toBe(1);
    worker.resume();
    await tick();
    await tick();
    expect(farm.completed).toHaveLength(1);
    // resumed: a full claim for both slots, then, after the job, its completion says two slots again
    expect(farm.sent("claim")).toEqual([
      [["demo.echo"], 2],
      [["demo.echo"], 2],
    ]);
    expect(farm.sent("complete").map((args) => args[2])).toEqual([2]);
    await worker.stop();
  });

  it("a job that ended without its last write (lease lost) declares the freed slot", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const h = handler("long", async () => {
      await gate.promise;
      return 1;
    });
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(h) });
    await worker.start();
    await tick();
    farm.offer("long", {}, 6_000);
    await tick();
    farm.expire("job1");
    await tick(2_000);
    gate.resolve();
    await tick();
    expect(finished).toEqual([expect.objectContaining({ outcome: "lost" })]);
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [["long"], 1] });
    await worker.stop();
  });

  it("refuses to advertise a capability no handler provides", async () => {
    const farm = new ScriptedFarm();
    const { worker } = makeWorker(farm, { onlyCapabilities: ["gpu"] });
    await expect(worker.start()).rejects.toThrow("capabilities not provided by any handler: gpu (available: demo.echo)");
    expect(worker.state).toBe("stopped");
    expect(farm.count("watch")).toBe(0);
  });

  it("streams output in batches and flushes it before completing", async () => {
    const farm = new ScriptedFarm();
    const talk = handler("talk", (_p, ctx) => {
      for (const t of ["Hel", "lo", " world", ". How", " are", " you"]) ctx.output(t);
      return Promise.resolve("ok");
    });
    const { worker } = makeWorker(farm, { handlers: handlersOf(talk) });
    farm.offer("talk");
    await worker.start();
    await tick();
    await tick();
    expect(farm.outputs.get("job1")).toEqual(["Hello world. How", " are you"]);
    const names = farm.calls.map((c) => c.name);
    expect(names.lastIndexOf("output")).toBeLessThan(names.indexOf("complete"));
    await worker.stop();
  });

  it("declares itself again with new capabilities when handlers change (the same subscription)", async () => {
    const farm = new ScriptedFarm();
    const list = [echo];
    const source = {
      get: (type: string) => list.find((h) => h.type === type),
      capabilities: () => Promise.resolve(list.map((h) => h.type)),
    };
    const { worker } = makeWorker(farm, { handlers: source });
    const seen: string[][] = [];
    worker.on("capabilities", (e) => seen.push(e.capabilities));
    await worker.start();
    expect(await worker.refreshCapabilities()).toEqual(["demo.echo"]);
    expect(farm.count("ready")).toBe(0);
    list.push(handler("demo.primes", () => Promise.resolve(1)));
    expect(await worker.refreshCapabilities()).toEqual(["demo.echo", "demo.primes"]);
    expect(farm.calls.filter((c) => c.name === "ready").map((c) => c.args)).toEqual([[["demo.echo", "demo.primes"], 1]]);
    expect(farm.count("doorbell")).toBe(1);
    expect(seen).toEqual([["demo.echo", "demo.primes"]]);
    list.length = 0;
    await worker.refreshCapabilities();
    expect(worker.snapshot()).toMatchObject({ state: "paused", reason: "no handler capabilities to offer", capabilities: [] });
    expect(farm.calls.at(-1)).toEqual({ name: "ready", args: [[], 0] });
    await worker.stop();
  });

  it("gives one running job back on request and goes on with the others", async () => {
    const farm = new ScriptedFarm();
    const slow = handler("slow", () => new Promise(() => undefined));
    const { worker, finished } = makeWorker(farm, { handlers: handlersOf(slow), concurrency: 2 });
    farm.offer("slow");
    farm.offer("slow");
    await worker.start();
    await tick();
    expect(worker.giveBack("job1")).toBe(true);
    expect(worker.giveBack("nope")).toBe(false);
    await tick();
    expect(farm.released).toEqual(["job1"]);
    expect(finished).toEqual([expect.objectContaining({ jobId: "job1", outcome: "released" })]);
    expect(worker.snapshot().running.map((r) => r.jobId)).toContain("job2");
    await worker.stop();
  });

  it("stops streaming a job's output once the server says it is too large, and still completes the job", async () => {
    const farm = new ScriptedFarm();
    const talk = handler("talk", async (_p, ctx) => {
      ctx.output("one\n");
      await new Promise((r) => setTimeout(r, 10));
      ctx.output("two\n");
      await new Promise((r) => setTimeout(r, 10));
      ctx.output("three\n");
      return "ok";
    });
    const { worker } = makeWorker(farm, { handlers: handlersOf(talk) });
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    farm.failNext.set("output", new ConvexError({ code: "too_large", message: "A job may stream at most 10000 chunks" }));
    farm.offer("talk");
    await worker.start();
    await tick(100);
    expect(farm.count("output")).toBe(1);
    expect(errors).toEqual(["output for job job1 stopped: A job may stream at most 10000 chunks"]);
    expect(farm.completed).toEqual([{ jobId: "job1", result: "ok" }]);
    await worker.stop();
  });

  it("counts a job whose end could not be reported as lost, not succeeded", async () => {
    const farm = new ScriptedFarm();
    const { worker, finished } = makeWorker(farm);
    const errors: string[] = [];
    worker.on("error", (e) => errors.push(e.message));
    farm.offer("demo.echo", 1);
    const refusal = new ConvexError({ code: "conflict", message: "try later" });
    farm.failNext.set("complete", refusal);
    await worker.start();
    await tick();
    await tick();
    expect(finished).toEqual([expect.objectContaining({ jobId: "job1", outcome: "lost", error: "could not report job job1: try later" })]);
    expect(errors).toEqual(["could not report job job1: try later"]);
    expect(worker.snapshot().totals).toMatchObject({ succeeded: 0, lost: 1 });
    await worker.stop();
  });
});
