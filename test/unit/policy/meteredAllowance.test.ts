import { describe, expect, it } from "vitest";
import { MeteredAllowance, type MeteredTally } from "../../../extension/policy/meteredAllowance";

function allowance(limit: number, start = new Date(2026, 10, 18, 23, 0).getTime()) {
  let stored: MeteredTally | undefined;
  const clock = { now: start };
  const a = new MeteredAllowance({ get: () => stored, set: (t) => void (stored = t) }, limit, () => clock.now);
  return { a, clock, stored: () => stored };
}

describe("what jobs may download today on a metered connection", () => {
  it("has no limit while the connection is not metered (or not known), and counts nothing then", () => {
    const { a } = allowance(10_000_000);
    expect(a.left()).toBeUndefined();
    a.spend(5_000_000);
    a.metered = false;
    a.spend(5_000_000);
    expect(a.usedToday()).toBe(0);
    a.metered = true;
    expect(a.left()).toBe(10_000_000);
  });

  it("counts what arrives while metered, down to nothing left", () => {
    const { a } = allowance(10_000);
    a.metered = true;
    a.spend(4_000);
    a.spend(4_000.4);
    expect(a.left()).toBe(2_000);
    a.spend(5_000);
    expect(a.left()).toBe(0);
    a.spend(-3);
    expect(a.usedToday()).toBe(13_000);
  });

  it("starts afresh on the next local day; a tally from another day counts nothing", () => {
    const { a, clock, stored } = allowance(10_000);
    a.metered = true;
    a.spend(9_000);
    expect(stored()?.day).toBe("2026-11-18");
    clock.now += 2 * 3_600_000; // 01:00 the next day
    expect(a.usedToday()).toBe(0);
    expect(a.left()).toBe(10_000);
    a.spend(1_000);
    expect(stored()).toEqual({ day: "2026-11-19", bytes: 1_000 });
  });

  it("a limit of 0 leaves nothing; a lowered limit applies to what was already used", () => {
    const { a } = allowance(0);
    a.metered = true;
    expect(a.left()).toBe(0);
    a.limitBytes = 1_000;
    a.spend(600);
    a.limitBytes = 500;
    expect(a.left()).toBe(0);
  });
});
