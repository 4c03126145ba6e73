import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { Worker } from "../../../extension/worker/worker";
import { deferred, FakeFarm, handler, handlersOf } from "./fakeFarm";

const echo = handler("demo.echo", async (payload) => payload);

describe("Worker lifecycle races", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("paused while its handlers are probed, it still subscribes, and resume() takes work", async () => {
    const farm = new FakeFarm();
    const probe = deferred<string[]>();
    const slowProbe = handler("demo.echo", async (p) => p, { capabilities: () => probe.promise });
    const worker = new Worker({ client: farm, handlers: handlersOf(slowProbe) });
    farm.add("demo.echo", { n: 1 });
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
    const farm = new FakeFarm();
    const answer = deferred<ClaimedJob[]>();
    let claimed: ClaimedJob[] = [];
    const realClaim = farm.claim.bind(farm);
    farm.claim = async (caps, max) => {
      claimed = await realClaim(caps, max);
      return answer.promise;
    };
    const worker = new Worker({ client: farm, handlers: handlersOf(echo) });
    farm.add("demo.echo");
    await worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(claimed).toHaveLength(1); // the server handed out a lease; the answer is still on its way

    let stopped = false;
    const stopping = worker.stop("switched off").then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false); // waits for the claim in flight
    answer.resolve(claimed);
    await stopping;
    expect(farm.released).toEqual(["job1"]);
    expect(farm.completed).toHaveLength(0);
  });
});
