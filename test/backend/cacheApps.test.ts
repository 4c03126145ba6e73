import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm } from "./appFarm";
import type { Farm } from "./setup";

const APP = buildModule({ imports: [FD_WRITE] });

const rowOf = (farm: Farm, jobId: string) => farm.t.run(async (ctx) => await ctx.db.get(jobId as never));

test("POST /api/apps/<name>?cacheTtlMs= makes the version's jobs cacheable by default; cache: false opts out; a bad ttl is refused", async () => {
  const farm = await publishingFarm();
  const answer = await publish(farm, "render", APP, { query: "cacheTtlMs=60000" });
  expect(await answer.json()).toMatchObject({ version: 1, cacheTtlMs: 60_000 });
  const byDefault = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", payload: { x: 1 } });
  const row = (await rowOf(farm, byDefault)) as { cache?: { key: string; ttlMs: number } };
  expect(row.cache?.ttlMs).toBe(60_000);
  const optedOut = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", payload: { x: 1 }, cache: false });
  expect(((await rowOf(farm, optedOut)) as { cache?: unknown }).cache).toBeUndefined();
  const bad = await publish(farm, "render", APP, { query: "cacheTtlMs=5" });
  expect(bad.status).toBe(400);
});
