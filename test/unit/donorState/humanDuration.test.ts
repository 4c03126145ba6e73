import { expect, it } from "vitest";
import { humanDuration } from "../../../extension/donorState/format";

it("durations read in the unit people use, one decimal below ten of it, never 60 s or 1000 ms", () => {
  const cases: Array<[number | null | undefined, string]> = [
    [0, "0 ms"],
    [6, "6 ms"],
    [850, "850 ms"],
    [999.6, "1 s"],
    [4_200, "4.2 s"],
    [42_000, "42 s"],
    [59_960, "1 min"],
    [90_000, "1.5 min"],
    [42 * 60_000, "42 min"],
    [2_500_000, "42 min"],
    [90 * 60_000, "1.5 h"],
    [18 * 3_600_000, "18 h"],
    [47.9 * 3_600_000, "2 d"],
    [3 * 86_400_000, "3 d"],
    [-5, "0 ms"],
    [null, "—"],
    [undefined, "—"],
    [Number.NaN, "—"],
  ];
  expect(cases.map(([ms]) => [ms, humanDuration(ms)])).toEqual(cases);
});
