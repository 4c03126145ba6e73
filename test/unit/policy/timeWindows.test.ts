import { describe, expect, it } from "vitest";
import { insideWindows, parseTimeWindow, type TimeWindow } from "../../../extension/policy/timeWindows";

function windows(...specs: string[]): TimeWindow[] {
  return specs.map((s) => {
    const parsed = parseTimeWindow(s);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.window;
  });
}
// 2026-11-16 is a Monday; local time.
const at = (day: number, hh: number, mm = 0) => new Date(2026, 10, 16 + day, hh, mm);

describe("time windows", () => {
  it("allows any time when no window is set", () => {
    expect(insideWindows([], at(3, 3))).toBe(true);
  });

  it("handles a window inside one day", () => {
    const w = windows("Mon-Fri 09:00-17:30");
    expect(insideWindows(w, at(0, 9))).toBe(true);
    expect(insideWindows(w, at(0, 17, 29))).toBe(true);
    expect(insideWindows(w, at(0, 17, 30))).toBe(false);
    expect(insideWindows(w, at(5, 12))).toBe(false); // Saturday
  });

  it("handles a window that crosses midnight, belonging to the day it starts", () => {
    const w = windows("Fri 22:00-06:00");
    expect(insideWindows(w, at(4, 23))).toBe(true); // Friday night
    expect(insideWindows(w, at(5, 5, 59))).toBe(true); // Saturday early morning
    expect(insideWindows(w, at(5, 6))).toBe(false);
    expect(insideWindows(w, at(4, 5))).toBe(false); // Friday early morning belongs to Thursday
  });

  it("reads whole days, lists, wrapping ranges, full names and shortcuts", () => {
    expect(insideWindows(windows("Sat,Sun"), at(6, 15))).toBe(true);
    expect(insideWindows(windows("Sat,Sun"), at(2, 15))).toBe(false);
    expect(insideWindows(windows("Fri-Mon 10:00-11:00"), at(6, 10, 30))).toBe(true); // Sunday inside Fri..Mon
    expect(insideWindows(windows("Fri-Mon 10:00-11:00"), at(1, 10, 30))).toBe(false); // Tuesday
    expect(insideWindows(windows("wednesday 00:00-24:00"), at(2, 23, 59))).toBe(true);
    expect(insideWindows(windows("weekends"), at(5, 1))).toBe(true);
    expect(insideWindows(windows("daily 12:00-13:00"), at(3, 12, 15))).toBe(true);
  });

  it.each([
    ["Funday 10:00-11:00", /not a day/],
    ["Mon 25:00-26:00", /00:00 to 24:00/],
    ["Mon 10:00-10:00", /same time/],
    ["Mon-Tue-Wed", /not a day or a range/],
    ["10:00-11:00", /not a day|not a time window/],
    ["", /not a time window/],
  ])("refuses %j with a clear error", (spec, error) => {
    const parsed = parseTimeWindow(spec);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });
});
