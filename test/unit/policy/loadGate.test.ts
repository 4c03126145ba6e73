import { describe, expect, it } from "vitest";
import { LoadGate } from "../../../extension/policy/loadGate";

describe("LoadGate", () => {
  const options = { threshold: 0.5, pauseAfterMs: 10_000, resumeAfterMs: 60_000 };

  it("closes only after the load stays high for pauseAfterMs", () => {
    const gate = new LoadGate(options);
    expect(gate.sample(0.9, 0)).toBe(false);
    expect(gate.sample(0.9, 9_999)).toBe(false);
    expect(gate.sample(0.9, 10_000)).toBe(true);
  });

  it("does not flap when the load spikes and drops", () => {
    const gate = new LoadGate(options);
    let t = 0;
    const seen = new Set<boolean>();
    for (let i = 0; i < 100; i++) {
      t += 3_000;
      seen.add(gate.sample(i % 2 === 0 ? 0.95 : 0.1, t)); // alternate every 3 s: never held for 10 s
    }
    expect([...seen]).toEqual([false]);
  });

  it("reopens only after the load stays low for resumeAfterMs, restarting the wait on a new spike", () => {
    const gate = new LoadGate(options);
    gate.sample(0.9, 0);
    gate.sample(0.9, 10_000);
    expect(gate.closed).toBe(true);
    expect(gate.sample(0.1, 20_000)).toBe(true);
    expect(gate.sample(0.9, 50_000)).toBe(true); // spike: the quiet period starts over
    expect(gate.sample(0.1, 60_000)).toBe(true);
    expect(gate.sample(0.1, 119_999)).toBe(true);
    expect(gate.sample(0.1, 120_000)).toBe(false);
  });
});
