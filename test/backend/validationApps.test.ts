import { expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { newFarm, snapshot, type Farm } from "./setup";

const APP = buildModule({ imports: [FD_WRITE] });

async function publishingFarm() {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "publisher", canPublish: true });
  return { ...farm, publishKey: key };
}

function publish(farm: Farm & { publishKey: string }, query: string) {
  return farm.t.fetch(`/api/apps/render${query}`, {
    method: "POST",
    headers: { "content-type": "application/wasm", authorization: `Bearer ${farm.publishKey}` },
    body: APP as RequestInit["body"],
  });
}

const rulesOf = async (farm: Farm, jobId: Id<"jobs">) => (await farm.t.run(async (ctx) => await ctx.db.get(jobId)))!.validation;

test("POST /api/apps/<name>?quorum=2 gives the version's jobs that validation unless they carry their own", async () => {
  const farm = await publishingFarm();
  const answer = await publish(farm, "?quorum=2&homogeneous=true");
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ name: "render", version: 1, validation: { quorum: 2, maxInstances: 4, homogeneous: true } });
  const defaulted = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render" });
  expect(await rulesOf(farm, defaulted)).toMatchObject({ quorum: 2, maxInstances: 4, homogeneous: true, round: 1, started: 0 });
  const own = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", validation: { quorum: 3 } });
  expect(await rulesOf(farm, own)).toMatchObject({ quorum: 3, maxInstances: 5 });
  expect((await rulesOf(farm, own))!.homogeneous).toBeUndefined();
  // quorum 1 of its own: the submitter asked for one run
  const once = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render", validation: { quorum: 1 } });
  expect(await rulesOf(farm, once)).toBeUndefined();
});

test("the other rules ride along as query parameters too: maxErrorInstances, spare, instanceDeadlineMs, distinct", async () => {
  const farm = await publishingFarm();
  const answer = await publish(farm, "?quorum=2&maxErrorInstances=6&spare=1&instanceDeadlineMs=60000&distinct=donor");
  expect(answer.status).toBe(200);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render" });
  expect(await rulesOf(farm, jobId)).toMatchObject({ quorum: 2, maxInstances: 4, maxErrorInstances: 6, spare: 1, instanceDeadlineMs: 60_000, distinct: "donor" });
});

test("the same bytes with another default are a new version; the same bytes and default are not", async () => {
  const farm = await publishingFarm();
  expect(await (await publish(farm, "")).json()).toMatchObject({ version: 1 });
  expect(await (await publish(farm, "?quorum=2")).json()).toMatchObject({ version: 2 });
  expect(await (await publish(farm, "?quorum=2")).json()).toMatchObject({ version: 2 });
  const plain = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "app.render" });
  expect(await rulesOf(farm, plain)).toMatchObject({ quorum: 2 });
});

test("bad defaults are refused with invalid_argument before anything is stored", async () => {
  const farm = await publishingFarm();
  const before = await snapshot(farm.t);
  const bad = ["?quorum=9", "?quorum=2&maxInstances=1", "?maxInstances=3", "?quorum=2&adaptive=yes", "?quorum=x"];
  bad.push("?distinct=donor", "?quorum=2&distinct=owner", "?quorum=2&spare=5", "?quorum=2&maxErrorInstances=0", "?quorum=2&instanceDeadlineMs=10");
  for (const query of bad) {
    const answer = await publish(farm, query);
    expect(answer.status, query).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("invalid_argument");
  }
  expect(await snapshot(farm.t)).toEqual(before);
  expect(await farm.t.run(async (ctx) => await ctx.db.query("appVersions").collect())).toEqual([]);
});
