import { describe, expect, it } from "vitest";
import { ConvexError } from "convex/values";
import { SlotDeclaration, STOP_DECLARE_WAIT_MS } from "../../../extension/worker/slotDeclaration";
import type { WorkerState } from "../../../extension/worker/workerTypes";
import { manualClock, recordingFarm, type Answers } from "./recordingFarm";

function declaration(over: { state?: WorkerState; concurrency?: number; running?: number; memoryHeld?: boolean; bytesLeft?: number; answers?: Answers } = {}) {
  const farm = recordingFarm(over.answers);
  const clock = manualClock();
  const failures: unknown[] = [];
  const slots = new SlotDeclaration({
    client: farm.client,
    clock,
    state: () => over.state ?? "running",
    concurrency: () => over.concurrency ?? 3,
    capabilities: () => ["demo.echo"],
    running: () => over.running ?? 1,
    memoryHeld: () => over.memoryHeld ?? false,
    bytesLeft: () => over.bytesLeft,
    failed: (e) => void failures.push(e),
  });
  return { farm, clock, slots, failures };
}

/** Let the promise callbacks queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("SlotDeclaration, one transition per test", () => {
  it("running: declares its whole concurrency", async () => {
    const { farm, slots } = declaration();
    await slots.declare();
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 3 }]);
  });

  it("on a metered connection: declares what its jobs may still download with the slots; with nothing left, no free slot", async () => {
    const metered = declaration({ bytesLeft: 2_500_000.7 });
    await metered.slots.declare();
    expect(metered.farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 3, maxBytes: 2_500_000 }]);
    const used = declaration({ bytesLeft: 0, running: 1 });
    expect(used.slots.now()).toBe(1); // the running job keeps its slot; none is free
    await used.slots.declare();
    expect(used.farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 1, maxBytes: 0 }]);
  });

  it.each<WorkerState>(["paused", "draining", "stopping", "stopped"])("%s: declares no free slot", async (state) => {
    const { farm, slots } = declaration({ state });
    expect(slots.now()).toBe(0);
    await slots.declare();
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 0 }]);
  });

  it("waiting for memory: declares only the jobs it runs, no free slot", async () => {
    const { farm, slots } = declaration({ memoryHeld: true, running: 1 });
    await slots.declare();
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 1 }]);
  });

  it("a refused declaration goes to the engine and does not reject", async () => {
    const refused = new ConvexError({ code: "revoked", message: "Worker key revoked" });
    const { slots, failures } = declaration({ answers: { ready: () => Promise.reject(refused) } });
    await expect(slots.declare()).resolves.toBeUndefined();
    expect(failures).toEqual([refused]);
  });

  it("before a stop: says it is stopping and leaves no timer once answered", async () => {
    const { farm, clock, slots } = declaration({ state: "stopping" });
    await slots.beforeStop();
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 0, stopping: true }]);
    expect(clock.pending).toEqual([]);
  });

  it("before a stop on a connection that never answers: gives up after its bound, not before", async () => {
    const { clock, slots } = declaration({ state: "stopping", answers: { ready: () => new Promise<never>(() => undefined) } });
    let done = false;
    void slots.beforeStop().then(() => (done = true));
    clock.advance(STOP_DECLARE_WAIT_MS - 1);
    await settle();
    expect(done).toBe(false);
    clock.advance(1);
    await settle();
    expect(done).toBe(true);
    expect(clock.pending).toEqual([]);
  });
});
