import { getDocumentSize } from "convex/values";
import { describe, expect, test } from "vitest";
import { ByteBudget, takeWithinBudget } from "../../../convex/core/budget";

/** Documents of these text sizes, one at a time as a query yields them. */
async function* rowsOf(sizes: number[]) {
  for (const [i, size] of sizes.entries()) yield await Promise.resolve({ i, text: "x".repeat(size) });
}

const sizeOf = (size: number) => getDocumentSize({ i: 0, text: "x".repeat(size) });

describe("takeWithinBudget", () => {
  test("takes up to maxRows while the budget lasts", async () => {
    const got = await takeWithinBudget(rowsOf([10, 10, 10, 10]), 3, new ByteBudget(1_000_000));
    expect(got.rows.map((r) => r.i)).toEqual([0, 1, 2]);
    expect(got.cut).toBe(false);
  });

  test("stops after the document that spends the budget, and says it was cut", async () => {
    const budget = new ByteBudget(2 * sizeOf(1000) + 1);
    const got = await takeWithinBudget(rowsOf([1000, 1000, 1000, 1000]), 10, budget);
    expect(got.rows.map((r) => r.i)).toEqual([0, 1, 2]);
    expect(got.cut).toBe(true);
    expect(budget.exhausted).toBe(true);
  });

  test("always takes one document, however big, so a caller makes progress", async () => {
    const got = await takeWithinBudget(rowsOf([100_000]), 10, new ByteBudget(10));
    expect(got.rows).toHaveLength(1);
    expect(got.cut).toBe(true);
  });

  test("a spent budget takes nothing and is cut; the end of the range is not a cut", async () => {
    const spent = new ByteBudget(10);
    spent.spend(10);
    expect(await takeWithinBudget(rowsOf([1]), 10, spent)).toEqual({ rows: [], cut: true });
    expect((await takeWithinBudget(rowsOf([1, 1]), 10, new ByteBudget())).cut).toBe(false);
  });

  test("several ranges share one budget", async () => {
    const budget = new ByteBudget(3 * sizeOf(500));
    const first = await takeWithinBudget(rowsOf([500, 500]), 10, budget);
    const second = await takeWithinBudget(rowsOf([500, 500, 500]), 10, budget);
    expect([first.rows.length, first.cut, second.rows.length, second.cut]).toEqual([2, false, 1, true]);
  });
});
