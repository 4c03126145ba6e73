import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { expectCode, newFarm, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";

/**
 * A batch takes jobs while children wait on it, so a submit that joins batch B while one of its parents waits on B
 * (directly, or through waiting jobs and batches) would make B wait on itself: refused with dependency_cycle, naming
 * the batch and the parent, and nothing is written. Submits that close no cycle are not refused.
 */

const submit = (farm: Farm, spec: Record<string, unknown>) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "j1", ...spec });

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = (await promise.then(
    () => null,
    (e: { data: { code: string; message: string } }) => e,
  ))!;
  expect(error, "a refusal").not.toBeNull();
  return error.data;
}

async function jobCount(farm: Farm) {
  return (await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect())).length;
}

test("joining a batch that a listed parent waits on is refused with dependency_cycle, naming the batch and the parent; nothing is written", async () => {
  const farm = await newFarm();
  await submit(farm, { batchId: "map" });
  const reduce = await submit(farm, { dependsOn: { batch: "map" } });
  const before = await jobCount(farm);
  const error = await refusal(submit(farm, { batchId: "map", dependsOn: { jobs: [reduce] } }));
  expect(error.code).toBe("dependency_cycle");
  expect(error.message).toContain('"map"');
  expect(error.message).toContain(reduce);
  expect(await jobCount(farm)).toBe(before);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("through a batch: a parent that waits on a batch whose members wait on the joined batch", async () => {
  const farm = await newFarm();
  await submit(farm, { batchId: "stage1" });
  await farm.t.mutation(api.jobs.submitBatch, {
    clientKey: farm.clientKey,
    jobs: Array.from({ length: 30 }, () => ({ type: "j2", batchId: "stage2", dependsOn: { batch: "stage1" } })),
  });
  const reduce = await submit(farm, { dependsOn: { batch: "stage2" } });
  const listed = await refusal(submit(farm, { batchId: "stage1", dependsOn: { jobs: [reduce] } }));
  expect(listed).toMatchObject({ code: "dependency_cycle" });
  expect(listed.message).toContain(reduce);
  // the batch parent of the new job leads there too
  const byBatch = await refusal(submit(farm, { batchId: "stage1", dependsOn: { batch: "stage2" } }));
  expect(byBatch).toMatchObject({ code: "dependency_cycle" });
  expect(byBatch.message).toContain('"stage2"');
  // a batch call with such a job is refused whole, naming it
  const inBatch = await refusal(
    farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "j1", batchId: "stage1" }, { type: "j1", batchId: "stage1", dependsOn: { jobs: [reduce] } }] }),
  );
  expect(inBatch.code).toBe("dependency_cycle");
  expect(inBatch.message).toMatch(/^jobs\[1\]: /);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("no false refusal: other batches, parents that wait on nothing, and later stages of a pipeline", async () => {
  const farm = await newFarm();
  const maps = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: Array.from({ length: 40 }, () => ({ type: "j1", batchId: "map1" })) });
  // map2[i] waits on map1[i]; a reduce waits on map2; more jobs join map1 and map2 afterwards
  await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: maps.map((id) => ({ type: "j2", batchId: "map2", dependsOn: { jobs: [id] } })) });
  const reduce = await submit(farm, { dependsOn: { batch: "map2" } });
  await submit(farm, { batchId: "map1", dependsOn: { jobs: [maps[0]] } });
  await submit(farm, { batchId: "map2", dependsOn: { jobs: [maps[1]] } });
  await submit(farm, { batchId: "report", dependsOn: { jobs: [reduce] } });
  await submit(farm, { batchId: "final", dependsOn: { batch: "map2", jobs: [reduce] } });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("HTTP: the refusal answers 409 with code dependency_cycle", async () => {
  const farm = await newFarm();
  await submit(farm, { batchId: "map" });
  const reduce = await submit(farm, { dependsOn: { batch: "map" } });
  const res = await farm.t.fetch("/api/jobs", {
    method: "POST",
    headers: { authorization: `Bearer ${farm.clientKey}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "j1", batchId: "map", dependsOn: { jobs: [reduce] } }),
  });
  expect(res.status).toBe(409);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("dependency_cycle");
});

test("a check that would look at more than 500 waiting jobs is refused as too_large, not left to deadlock", async () => {
  const farm = await newFarm();
  let last = await submit(farm, { type: "j2" });
  for (let i = 0; i < 510; i++) last = await submit(farm, { dependsOn: { jobs: [last] } });
  await submit(farm, { batchId: "b" });
  await submit(farm, { dependsOn: { batch: "b" } });
  await expectCode(submit(farm, { batchId: "b", dependsOn: { jobs: [last] } }), "too_large");
  // with nobody waiting on the batch, there is nothing to look at
  await submit(farm, { batchId: "quiet", dependsOn: { jobs: [last] } });
}, 120_000);
