import { expect, test } from "vitest";
import { api } from "../../convex/_generated/api";
import { enrollWorker, newFarm } from "./setup";

test("submit, claim, heartbeat, output, complete, get", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "demo.echo", payload: { x: 1 } });
  expect(await farm.t.query(api.workers.watch, { apiKey: w.apiKey, capabilities: [] })).toEqual({ available: true });
  const [claimed] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: [] });
  expect(claimed).toMatchObject({ jobId, type: "demo.echo", payload: { x: 1 }, attempt: 1 });
  const hb = await farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: claimed.leaseId, progress: 0.5, status: "half" });
  expect(hb.cancel).toBe(false);
  await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claimed.leaseId, chunk: "hello " });
  await farm.t.mutation(api.workers.output, { apiKey: w.apiKey, leaseId: claimed.leaseId, chunk: "world" });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: claimed.leaseId, result: { ok: true } });
  const job = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
  expect(job).toMatchObject({ status: "succeeded", output: "hello world", result: { ok: true }, attempt: 1, progress: 1 });
  const overview = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
  expect(overview.counts).toMatchObject({ pending: 0, running: 0, succeeded: 1 });
});
