import { ConvexClient } from "convex/browser";
import { afterAll, beforeAll } from "vitest";
import { api } from "../../convex/_generated/api";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { sleep, startFarm, stopFarm, type Farm } from "./helpers";

export type Lease = { leaseId: string; payload: unknown };

/**
 * A worker written against the public worker API only (no engine, no job code): it claims demo.echo jobs two at a
 * time as fast as it can and hands each lease to `act` (which completes or fails it), until stopped. Misbehaving
 * donors of the replicated-job tests.
 */
export function startScripted(farm: Farm, apiKey: string, act: (client: ConvexClient, lease: Lease) => Promise<void>) {
  const client = new ConvexClient(farm.server.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  farm.clients.push(client);
  let stopped = false;
  let acted = 0;
  const loop = (async () => {
    while (!stopped) {
      const leases = await client.mutation(api.workers.claim, { apiKey, capabilities: ["demo.echo"], max: 2 });
      for (const lease of leases) {
        await act(client, lease);
        acted++;
      }
      if (leases.length === 0) await sleep(30);
    }
  })();
  return {
    acted: () => acted,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * A farm of three workers (two slots each) for the suite, and the honest CLI workers (`farmhand-worker`) a test
 * starts on it with `startClis` (each awaited until it says it is working); both go when the suite ends.
 */
export function useFarmWithClis() {
  const suite: { farm?: Farm; clis: CliRun[] } = { clis: [] };
  beforeAll(async () => {
    suite.farm = await startFarm(3, 2);
  });
  afterAll(async () => {
    for (const run of suite.clis) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await stopFarm(suite.farm!);
  });
  return {
    farm: () => suite.farm!,
    clis: suite.clis,
    startClis: async (keys: string[]) => {
      for (const key of keys) {
        const run = spawnCli(["--url", suite.farm!.server.url, "--key", key]);
        suite.clis.push(run);
        await waitForLine(run, /working on/);
      }
    },
  };
}
