import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Throttle } from "../../../extension/views/throttle";

describe("Throttle (one redraw per window however many progress events)", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("runs the first request at once and every burst within a window once at its end", async () => {
    let runs = 0;
    const throttle = new Throttle(() => runs++, 100);
    throttle.request();
    expect(runs).toBe(1);
    for (let i = 0; i < 80; i++) throttle.request(); // 8 jobs × 10 progress events, within one window
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2); // nothing new: no more runs
    expect(vi.getTimerCount()).toBe(0); // and no timer left behind
  });

  it("keeps to one run per window under a steady stream of requests", async () => {
    let runs = 0;
    const throttle = new Throttle(() => runs++, 100);
    for (let ms = 0; ms < 1_000; ms += 10) {
      throttle.request();
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(runs).toBeGreaterThanOrEqual(10);
    expect(runs).toBeLessThanOrEqual(11);
  });

  it("runs nothing after it is disposed", async () => {
    let runs = 0;
    const throttle = new Throttle(() => runs++, 100);
    throttle.request();
    throttle.request();
    throttle.dispose();
    await vi.advanceTimersByTimeAsync(500);
    expect(runs).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
