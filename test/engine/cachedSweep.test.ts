import { afterEach, expect, it } from "vitest";
import { startFarm, stopFarm, type Farm } from "./helpers";
import { cachedSweep } from "./cachedSweep";

let farm: Farm | undefined;
afterEach(async () => {
  if (farm) await stopFarm(farm);
  farm = undefined;
});

it("a cached sweep with repeats on engine workers: each distinct payload runs once, every repeat takes its result", async () => {
  farm = await startFarm(2, 4);
  const { rows, executions } = await cachedSweep(farm, { distinct: 40, copies: 3, cache: true, workers: 2 });
  expect(rows.every((r) => r.status === "succeeded")).toBe(true);
  expect(executions).toBe(40);
  const ran = new Map(rows.filter((r) => r.cachedFrom === undefined).map((r) => [r._id as string, r]));
  expect(ran.size).toBe(40);
  for (const row of rows.filter((r) => r.cachedFrom !== undefined)) {
    const source = ran.get(row.cachedFrom!)!;
    expect(row.result).toEqual(source.result);
    expect(row.payload).toEqual(source.payload);
  }
}, 120_000);
