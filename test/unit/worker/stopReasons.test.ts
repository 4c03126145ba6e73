import { describe, expect, it } from "vitest";
import { ConvexError } from "convex/values";
import { Worker } from "../../../extension/worker/worker";
import type { HandlerSource } from "../../../extension/worker/handler";
import { manualClock, recordingFarm, type Answers } from "./recordingFarm";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const refusal = (code: string, message: string) => new ConvexError({ code, message });

function engine(answers: Answers = {}, capabilities: string[][] = [["demo.echo"]]) {
  const farm = recordingFarm(answers);
  let probe = 0;
  const handlers: HandlerSource = { get: () => undefined, capabilities: () => Promise.resolve(capabilities[Math.min(probe++, capabilities.length - 1)]) };
  const worker = new Worker({ client: farm.client, handlers, clock: manualClock() });
  return { farm, worker };
}

describe("stop reasons: typed, and what each sends", () => {
  it("a refused key stops it as keyRefused with the server's code, and nothing more is said with that key", async () => {
    const { farm, worker } = engine({ claim: () => Promise.reject(refusal("revoked", "Worker key revoked")) });
    await worker.start();
    await settle();
    await settle();
    expect(worker.snapshot()).toMatchObject({ state: "stopped", stop: { kind: "keyRefused", code: "revoked", message: "Worker key revoked" } });
    expect(farm.names()).toEqual(["doorbell", "claim"]);
    expect(farm.subscribed).toBe(false);
  });

  it("a refused key on the subscription stops it the same way", async () => {
    const { farm, worker } = engine();
    await worker.start();
    farm.bellError(refusal("bad_key", "Unknown worker key"));
    await settle();
    expect(worker.snapshot().stop).toEqual({ kind: "keyRefused", code: "bad_key", message: "Unknown worker key" });
    expect(farm.sent("ready")).toEqual([]);
  });

  it("its owner's stop says 'take nothing more' (slots 0, stopping) before it lets go", async () => {
    const { farm, worker } = engine();
    await worker.start();
    await worker.stop({ kind: "user", detail: "window closing" });
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 0, stopping: true }]);
    expect(worker.snapshot()).toMatchObject({ state: "stopped", reason: "window closing", stop: { kind: "user", detail: "window closing" } });
  });

  it("a claim refused for good stops it as refused (call and code), and it still says it is stopping", async () => {
    const { farm, worker } = engine({ claim: () => Promise.reject(refusal("invalid_argument", "bad capability")) });
    await worker.start();
    await settle();
    await settle();
    expect(worker.snapshot().stop).toEqual({ kind: "refused", call: "claim", code: "invalid_argument", message: "bad capability" });
    expect(farm.sent("ready")).toEqual([{ capabilities: ["demo.echo"], slots: 0, stopping: true }]);
  });

  it("no capability at start: noCapabilities, and nothing is sent", async () => {
    const { farm, worker } = engine({}, [[]]);
    await worker.start();
    expect(worker.snapshot().stop).toEqual({ kind: "noCapabilities" });
    expect(farm.calls).toEqual([]);
  });

  it("a drain with nothing running stops as drained", async () => {
    const { worker } = engine();
    await worker.start();
    await worker.drain();
    expect(worker.snapshot().stop).toEqual({ kind: "drained" });
  });

  it("paused by its caller or by itself: the snapshot says which (the session resumes only its own pause)", async () => {
    const { farm, worker } = engine({}, [["demo.echo"], []]);
    await worker.start();
    worker.pause("on battery");
    expect(worker.snapshot()).toMatchObject({ state: "paused", pausedBy: "caller", reason: "on battery" });
    expect(farm.sent("ready").at(-1)).toEqual({ capabilities: ["demo.echo"], slots: 0 });
    worker.resume();
    await worker.refreshCapabilities();
    expect(worker.snapshot()).toMatchObject({ state: "paused", pausedBy: "engine", reason: "no handler capabilities to offer" });
    await worker.stop();
  });
});
