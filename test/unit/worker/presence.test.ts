import { describe, expect, it } from "vitest";
import { PresenceReporter } from "../../../extension/worker/presence";
import { manualClock, recordingFarm } from "./recordingFarm";

const FACTS = { cores: 4, memoryMB: 8_000, os: "linux", arch: "x64", gpus: [] };

function reporter(options: { live?: boolean; measure?: () => Promise<typeof FACTS> } = {}) {
  const farm = recordingFarm();
  const clock = manualClock();
  const failures: string[] = [];
  const presence = new PresenceReporter({
    client: farm.client,
    clock,
    everyMs: 1_000,
    measureFacts: options.measure ?? (() => Promise.resolve(FACTS)),
    live: () => options.live ?? true,
    failed: (_e, what) => void failures.push(what),
  });
  return { farm, clock, presence, failures };
}

describe("PresenceReporter, one transition per test", () => {
  it("off → on: one presence call per period, nothing before", () => {
    const { farm, clock, presence } = reporter();
    presence.start();
    expect(presence.current.kind).toBe("on");
    clock.advance(999);
    expect(farm.names()).toEqual([]);
    clock.advance(1);
    expect(farm.calls).toEqual([{ name: "presence", args: {} }]);
    clock.advance(2_000);
    expect(farm.names()).toEqual(["presence", "presence", "presence"]);
  });

  it("on → off: no timer left, no call after", () => {
    const { farm, clock, presence } = reporter();
    presence.start();
    presence.stop();
    expect(presence.current.kind).toBe("off");
    expect(clock.pending).toEqual([]);
    clock.advance(5_000);
    expect(farm.calls).toEqual([]);
  });

  it("reports the machine's facts once; unchanged facts are not sent again", async () => {
    const { farm, presence } = reporter();
    await presence.reportFacts();
    await presence.reportFacts();
    expect(farm.calls).toEqual([{ name: "reportFacts", args: { facts: FACTS } }]);
  });

  it("facts measured after the engine stopped are not sent", async () => {
    const { farm, presence } = reporter({ live: false });
    await presence.reportFacts();
    expect(farm.calls).toEqual([]);
  });

  it("a failed measurement is told, never thrown", async () => {
    const { presence, failures } = reporter({ measure: () => Promise.reject(new Error("no nvidia-smi")) });
    await presence.reportFacts();
    expect(failures).toEqual(["reportFacts"]);
  });
});
