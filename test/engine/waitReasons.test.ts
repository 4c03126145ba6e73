// Why a job waits, end to end with a real CLI worker on the loopback server: a job no machine meets and a quorum-2
// job on a farm of one machine each say why through `farmhand status` (its JSON line and its stderr sentence).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import { runFarmhand, spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { connect, sleep, startFarm, stopFarm, type Farm } from "./helpers";

type Status = { status: string; waitCode: string | null; waitReason: string | null };

describe("why a job waits (a real CLI worker)", () => {
  let farm: Farm;
  let cli: CliRun;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    farm = await startFarm(1, 2);
    env = { FARMHAND_URL: farm.server.url, FARMHAND_CLIENT_KEY: farm.seeded.clientKey, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-why-")) };
    cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0]]);
    await waitForLine(cli, /working on/);
  });
  afterAll(async () => {
    if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
    await stopFarm(farm);
  });

  /** `farmhand status <id>` until its code is `code` (the summariser runs a moment after each change). */
  async function statusUntil(jobId: string, code: string): Promise<{ job: Status; err: string }> {
    const until = Date.now() + 45_000;
    for (;;) {
      const run = await runFarmhand(["status", jobId], env);
      expect(run.code, run.err).toBe(0);
      const job = JSON.parse(run.out[0]) as Status;
      if (job.waitCode === code || Date.now() > until) return { job, err: run.err };
      await sleep(500);
    }
  }

  it("a job that needs more memory than the machine has says so, naming what it has", async () => {
    const client = connect(farm);
    const jobId = await client.mutation(api.jobs.submit, { clientKey: farm.seeded.clientKey, type: "demo.echo", payload: {}, requirements: { minMemoryMB: 4_000_000 } });
    const { job, err } = await statusUntil(jobId, "no_machine_meets");
    expect(job).toMatchObject({ status: "pending", waitCode: "no_machine_meets" });
    expect(job.waitReason).toMatch(/^needs 3906\.3 GB of memory; the largest machine has [\d.]+ (GB|MB): no machine of the farm can run it$/);
    expect(err).toContain(`pending (no_machine_meets): ${job.waitReason}`);
  }, 90_000);

  it("a quorum-2 job on one machine runs once, then says it needs a second machine", async () => {
    const client = connect(farm);
    const jobId = await client.mutation(api.jobs.submit, { clientKey: farm.seeded.clientKey, type: "demo.echo", payload: { say: "twice" }, validation: { quorum: 2 } });
    const { job, err } = await statusUntil(jobId, "needs_more_machines");
    expect(job).toMatchObject({
      status: "pending",
      waitCode: "needs_more_machines",
      waitReason: "quorum 2 needs 2 different machines; 1 online can run it (it already ran an instance): it waits until another one comes online",
    });
    expect(err).toContain("pending (needs_more_machines): quorum 2 needs 2 different machines");
  }, 90_000);
});
