import { describe, expect, test } from "vitest";
import { estimateText, paceText, queueEstimate } from "../../../convex/queue/paceText";

describe("a lane's pace and estimate in words", () => {
  test("a pace under one a minute is said per hour, never 0.0 a minute", () => {
    expect(paceText(1)).toBe("1 an hour");
    expect(paceText(2)).toBe("2 an hour");
    expect(paceText(59)).toBe("59 an hour");
    expect(paceText(60)).toBe("1 a minute");
    expect(paceText(90)).toBe("1.5 a minute");
    expect(paceText(596)).toBe("9.9 a minute");
    expect(paceText(597)).toBe("10 a minute");
    expect(paceText(720)).toBe("12 a minute");
  });

  test("an estimate in min, h or days, rounded the same way as the pace", () => {
    expect(estimateText(0.5)).toBe("under a minute");
    expect(estimateText(1)).toBe("1 min");
    expect(estimateText(89)).toBe("89 min");
    expect(estimateText(90)).toBe("1.5 h");
    expect(estimateText(180)).toBe("3 h");
    expect(estimateText(9.9 * 60)).toBe("9.9 h");
    expect(estimateText(9.95 * 60)).toBe("10 h");
    expect(estimateText(47 * 60)).toBe("47 h");
    expect(estimateText(48 * 60)).toBe("2 days");
  });

  test("the estimate agrees with the pace it is said with", () => {
    // 3 jobs at 1 an hour: about 3 h (was "0.0 a minute, about 3 h")
    expect(`${paceText(1)}, ${queueEstimate(3, 1)}`).toBe("1 an hour, about 3 h");
    expect(`${paceText(120)}, ${queueEstimate(10, 120)}`).toBe("2 a minute, about 5 min");
    expect(queueEstimate(3, 0)).toBeNull();
    expect(queueEstimate(0, 10)).toBeNull();
  });
});
