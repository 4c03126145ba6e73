// Energy given, end to end: an engine whose gauge estimates each job's energy (CPU time × watts per core) reports it
// with the job's end over the real Convex client, and the farm keeps it in the donor's credit rows.
import { afterAll, beforeAll, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import { HandlerRegistry } from "../../extension/handlers";
import { estimatedGauge } from "../../extension/worker/energy";
import { convexFarmClient } from "../../extension/worker/farmClient";
import { Worker } from "../../extension/worker/worker";
import { connect, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

let farm: Farm;
beforeAll(async () => {
  farm = await startFarm(1, 2);
});
afterAll(async () => {
  await stopFarm(farm);
});

it("a job's estimated energy travels with its end and lands in the donor's credit (workers:myCredit)", async () => {
  // in this process (a busy machine starves the lowest-priority job processes): 2.5 s of CPU time over 1.5 s of wall
  // time on two cores, as a process-pool run would report it
  const registry = new HandlerRegistry();
  registry.register({ type: "test.energy", run: async (_p, ctx) => (await sleep(1_500), ctx.onCpuMs?.(2_500), "ok") });
  const worker = new Worker({ client: convexFarmClient(connect(farm), farm.seeded.workerKeys[0]), handlers: registry, concurrency: 2, energy: estimatedGauge({ wattsPerCore: () => 10 }) });
  farm.workers.push(worker);
  await worker.start();
  const ids = await submit(farm, [{ type: "test.energy" }, { type: "test.energy" }]);
  await waitForJobs(farm, ids);
  const credit = await connect(farm).query(api.workers.myCredit, { apiKey: farm.seeded.workerKeys[0] });
  // 10 W per busy core: 10 J per CPU-second, 25 J a job
  expect(credit.week.energyJ).toBe(50);
  expect(credit.allTime.energyJ).toBe(50);
});
