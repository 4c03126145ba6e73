import { expect, test } from "vitest";
import { percent } from "../../../extension/donorState/format";

test("a share reads as a whole percentage with a space before the sign, as the docs and the console write it", () => {
  expect(percent(0.5)).toBe("50 %");
  expect(percent(0.004)).toBe("0 %");
  expect(percent(1.7)).toBe("100 %");
  expect(percent(-1)).toBe("0 %");
  expect(percent(undefined)).toBe("");
});
