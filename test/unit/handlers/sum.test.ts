import { describe, expect, test } from "vitest";
import { sum } from "../../../extension/handlers/impl/sum";
import { collectInputs, withInputs } from "../../../extension/handlers/withInputs";
import type { Handler, HandlerContext } from "../../../extension/worker/handler";

function inputsOf(results: unknown[]) {
  return async function* () {
    for (const [i, result] of results.entries()) yield await Promise.resolve({ jobId: `j${i}`, result });
  };
}

describe("demo.sum", () => {
  test("sums result[field] over its inputs and counts them; a result without a number adds nothing", async () => {
    expect(await sum({ payload: { field: "n" }, inputs: [{ n: 1 }, { n: 2.5 }, { m: 9 }, null, { n: "7" }] })).toEqual({ sum: 3.5, inputs: 5 });
    expect(await sum({ payload: { field: "n" }, inputs: [] })).toEqual({ sum: 0, inputs: 0 });
  });

  test("a payload without a field fails, not retried", async () => {
    await expect(sum({ payload: {}, inputs: [] })).rejects.toThrow(/payload.field/);
    await expect(sum({ payload: {}, inputs: [] })).rejects.toMatchObject({ retryable: false });
    await expect(sum({ payload: { field: 3 }, inputs: [] })).rejects.toMatchObject({ retryable: false });
  });
});

describe("withInputs", () => {
  test("hands the inner handler its payload and every input's result, in order", async () => {
    let seen: unknown;
    const inner: Handler = { type: "demo.sum", run: (input) => ((seen = input), Promise.resolve("ok")) };
    const ctx = { inputs: inputsOf([{ n: 1 }, { n: 2 }]) } as unknown as HandlerContext;
    expect(await withInputs(inner).run({ field: "n" }, ctx)).toBe("ok");
    expect(seen).toEqual({ payload: { field: "n" }, inputs: [{ n: 1 }, { n: 2 }] });
  });

  test("past the byte cap the job fails inputs_too_large, not retried", async () => {
    const big = "x".repeat(1_000);
    await expect(collectInputs(inputsOf([big, big]), 1_500)).rejects.toThrow(/^inputs_too_large/);
    await expect(collectInputs(inputsOf([big, big]), 1_500)).rejects.toMatchObject({ retryable: false });
    expect(await collectInputs(inputsOf([big]), 1_500)).toEqual([big]);
    expect(await collectInputs(undefined, 10)).toEqual([]);
  });
});
