// An `apps` lane names the apps it holds jobs of (convex/lanes/laneApps.ts): noted at submit when new (one lane write
// per new app, none per job), shown by farm:overview, the console's Stuck section and the lane's wait sentence.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { laneLabel } from "../../convex/queue/laneLabel";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { publish, publishingFarm, type PublishingFarm } from "./appFarm";
import { measure } from "./metrics";
import { enrollWorker, LAPTOP_FACTS, refreshSummaries } from "./setup";
import { checkConsistency } from "./sweep/consistency";

const WASM = buildModule({ imports: [FD_WRITE] });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 10, 18, 12));
});
afterEach(() => {
  vi.useRealTimers();
});

async function publishApp(farm: PublishingFarm, name: string, memoryMB: number) {
  expect((await publish(farm, name, WASM, { query: `memoryMB=${memoryMB}&timeoutMs=5000` })).status).toBe(200);
}

const submitApp = (farm: PublishingFarm, name: string) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: `app.${name}`, payload: { n: 1 } });

const opsKey = async (farm: PublishingFarm) => (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" })).key;

test("two apps of one memory class share a lane that names both; another class is its own lane, and no two rows read the same", async () => {
  const farm = await publishingFarm();
  await publishApp(farm, "render", 64);
  await publishApp(farm, "tiles", 64);
  await publishApp(farm, "mandelbrot", 128);
  for (const name of ["render", "render", "tiles", "mandelbrot"]) await submitApp(farm, name);
  const w = await enrollWorker(farm, { facts: LAPTOP_FACTS });
  await refreshSummaries(farm.t);
  const { lanes } = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
  const labels = lanes.map(laneLabel).sort();
  expect(labels).toEqual(["app.mandelbrot v1 · ≥ 128 MB memory", "app.render v1, app.tiles v1 · ≥ 64 MB memory"]);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a lane is written when a job of an app it has not named lands in it, never per job", async () => {
  const farm = await publishingFarm();
  await publishApp(farm, "render", 64);
  await publishApp(farm, "tiles", 64);
  const written = async (name: string) => (await measure(farm.t, "mutation", api.jobs.submit, { clientKey: farm.clientKey, type: `app.${name}`, payload: { n: 1 } })).usage.documentsWritten;
  await submitApp(farm, "render");
  const again = await written("render");
  expect(await written("render")).toBe(again);
  // a new app in the same lane: the lane's one write more
  expect(await written("tiles")).toBe(again + 1);
  expect(await written("tiles")).toBe(again);
});

test("past three apps a lane says 'and more'; a lane nobody runs says which apps its jobs are, and the Stuck section filters by the one app", async () => {
  const farm = await publishingFarm();
  for (const name of ["a1", "a2", "a3", "a4", "a5"]) await publishApp(farm, name, 64);
  await publishApp(farm, "solo", 128);
  for (const name of ["a1", "a2", "a3", "a4", "a5", "solo"]) await submitApp(farm, name);
  // a worker that does not run apps
  await enrollWorker(farm, { facts: LAPTOP_FACTS, types: ["demo.echo"] });
  await refreshSummaries(farm.t);
  const { stuck } = await farm.t.query(api.console.overview, { apiKey: await opsKey(farm) });
  const many = stuck.find((l) => l.requirements?.memoryMB === 64)!;
  expect(laneLabel({ ...many, requirements: many.requirements ?? undefined })).toBe("app.a1 v1, app.a2 v1, app.a3 v1 and more · ≥ 64 MB memory");
  expect(many.type).toBeNull();
  const solo = stuck.find((l) => l.requirements?.memoryMB === 128)!;
  expect(solo).toMatchObject({ type: "app.solo", pending: 1, waitCode: "no_worker_for_type", waitReason: "no online worker handles apps (app.solo v1): it waits until one does" });
  expect(await checkConsistency(farm.t)).toEqual([]);
});
