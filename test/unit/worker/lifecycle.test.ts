import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { Worker } from "../../../extension/worker/worker";
import { deferred, ScriptedFarm, handler, handlersOf } from "./scriptedFarm";

const echo = handler("demo.echo", (payload) => Promise.resolve(payload));

describe("Worker lifecycle races", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("paused while its handlers are probed, it still subscribes, and resume() takes work", async () => {
    const farm = new ScriptedFarm();
    const probe = deferred<string[]>();
    const slowProbe = handler("demo.echo", (p) => Promise.resolve(p), { capabilities: () => probe.promise });
    const worker = new Worker({ client: farm, handlers: handlersOf(slowProbe) });
    farm.offer("demo.echo", { n: 1 });
    const starting = worker.start();
    worker.pause("user came back");
    probe.resolve(["demo.echo"]);
    await starting;
    expect(farm.doorbellCount).toBe(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(farm.completed).toHaveLength(0); // paused: nothing taken
    worker.resume();
    await vi.advanceTimersByTimeAsync(0);
    expect(farm.completed).toEqual([{ jobId: "job1", result: { n: 1 } }]);
    await worker.stop();
  });

  it("stopped while a claim is on its way, it gives the claimed jobs back before stop() resolves", async () => {
    const farm = new ScriptedFarm();
    const answer = deferred<ClaimedJob[]>();
    let claimed: ClaimedJob[] = [];
    const realClaim = farm.claim.bind(farm);
    farm.claim = async (args) => {
      claimed = await realClaim(args);
      return answer.promise;
    };
    const worker = new Worker({ client: farm, handlers: handlersOf(echo) });
    farm.offer("demo.echo");
    await worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(claimed).toHaveLength(1); // the server handed out a lease; the answer is still on its way

    let stopped = false;
    const stopping = worker.stop({ kind: "user", detail: "switched off" }).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false); // waits for the claim in flight
    answer.resolve(claimed);
    await stopping;
    expect(farm.released).toEqual(["job1"]);
    expect(farm.completed).toHaveLength(0);
  });

  it("draining while a claim is on its way, it gives the claimed jobs back instead of starting them", async () => {
    const farm = new ScriptedFarm();
    const gate = deferred();
    const slow = handler("slow", async () => {
      await gate.promise;
      return "slow done";
    });
    const worker = new Worker({ client: farm, handlers: handlersOf(slow, echo), concurrency: 2 });
    const started: string[] = [];
    worker.on("jobStarted", (e) => started.push(e.jobId));
    const first = farm.offer("slow");
    await worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([first]);

    // The next claim reaches the server (it leases the job) but its answer is held back.
    const answer = deferred<ClaimedJob[]>();
    let claimed: ClaimedJob[] = [];
    const realClaim = farm.claim.bind(farm);
    farm.claim = async (args) => {
      claimed = await realClaim(args);
      return answer.promise;
    };
    const late = farm.offer("demo.echo");
    await vi.advanceTimersByTimeAsync(0);
    expect(claimed.map((j) => j.jobId)).toEqual([late]);

    let drained = false;
    const draining = worker.drain().then(() => (drained = true));
    answer.resolve(claimed);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([first]); // the late answer started nothing
    expect(farm.released).toEqual([late]); // and its lease went back to the queue
    expect(drained).toBe(false); // the running job still finishes
    gate.resolve();
    await draining;
    expect(worker.state).toBe("stopped");
    expect(farm.completed).toEqual([{ jobId: first, result: "slow done" }]);
  });
});
