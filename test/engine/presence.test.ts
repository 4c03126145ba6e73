// Issue 24: a worker that stops cleanly tells the farm, so every view shows it offline at once ("stopped 3 min ago"),
// not "online" for the six minutes of the online window; started again, it is online again.
import { afterEach, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import { createBuiltinRegistry } from "../../extension/handlers";
import { convexFarmClient } from "../../extension/worker/farmClient";
import { Worker } from "../../extension/worker/worker";
import { connect, sleep, startFarm, stopFarm, type Farm } from "./helpers";

let farm: Farm;
afterEach(async () => {
  await stopFarm(farm);
});

/** What farm:overview says of the worker, once the summary (rewritten a second or so after a change) shows `accept`. */
async function rowWhen(apiKey: string, workerId: string, accept: (row: { online: boolean; stoppedAt?: number }) => boolean) {
  const client = connect(farm);
  for (let tries = 0; tries < 100; tries++) {
    const row = (await client.query(api.farm.overview, { apiKey })).workers.find((w) => w.workerId === workerId);
    if (row && accept(row)) return row;
    await sleep(100);
  }
  throw new Error("farm:overview never showed the worker as expected");
}

describe("presence of a real engine", () => {
  it("a clean stop shows the worker offline at once, with when; a new start shows it online again", async () => {
    farm = await startFarm(2, 1);
    const [key, watcherKey] = farm.seeded.workerKeys;
    const workerId = farm.seeded.workerIds[0];
    const { registry, pool } = createBuiltinRegistry({ ollama: false });
    farm.closers.push(() => pool.close());
    const make = () => new Worker({ client: convexFarmClient(connect(farm), key), handlers: registry, onlyCapabilities: ["demo.echo"] });
    const first = make();
    await first.start();
    await rowWhen(watcherKey, workerId, (r) => r.online);
    const before = Date.now();
    await first.stop();
    const stopped = await rowWhen(watcherKey, workerId, (r) => r.stoppedAt !== undefined);
    expect(stopped.online).toBe(false);
    expect(stopped.stoppedAt).toBeGreaterThanOrEqual(before);
    const again = make();
    farm.workers.push(again);
    await again.start();
    const back = await rowWhen(watcherKey, workerId, (r) => r.stoppedAt === undefined);
    expect(back.online).toBe(true);
  }, 60_000);
});
