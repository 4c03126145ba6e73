import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { anyApi } from "convex/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { procState, runnersOf, spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { connect, jobsOf, sleep, startFarm, stopFarm, waitForJobs, type Farm } from "./helpers";

/** A directory holding a fake `nvidia-smi` that prints these lines (one GPU per line). */
function fakeNvidiaSmi(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-gpu-"));
  const script = join(dir, "nvidia-smi");
  writeFileSync(script, `#!/bin/sh\nprintf '${lines.map((l) => `${l}\\n`).join("")}'\n`);
  chmodSync(script, 0o755);
  return dir;
}

const withPath = (dir: string) => ({ PATH: `${dir}${delimiter}${process.env.PATH ?? ""}` });

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}


describe.runIf(process.platform === "linux")("the headless worker: machine facts, requirements and suspension, end to end", () => {
  let farm: Farm;
  const clis: CliRun[] = [];
  beforeAll(async () => {
    farm = await startFarm(2, 2);
  });
  afterEach(() => {
    for (const cli of clis.splice(0)) if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
  });
  afterAll(async () => {
    await stopFarm(farm);
  });

  const workerRow = (i: number) => farm.server.t.run(async (ctx) => await ctx.db.get(farm.seeded.workerIds[i]));

  it("reports the machine's facts (a fake nvidia-smi's GPUs) and gets the GPU job; the worker without a GPU never does", async () => {
    const client = connect(farm);
    const gpuJob = (await client.mutation(anyApi.jobs.submit, {
      clientKey: farm.seeded.clientKey,
      type: "demo.echo",
      payload: { n: 1 },
      requirements: { gpu: { vendor: "nvidia", minVramMB: 8_000 } },
    })) as Id<"jobs">;
    const plain = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0]], withPath(fakeNvidiaSmi([])));
    clis.push(plain);
    await waitForLine(plain, /working on/);
    await until("the GPU-less worker reported its facts", async () => (await workerRow(0))?.facts !== undefined);
    expect((await workerRow(0))?.facts).toMatchObject({ gpus: [] });
    await sleep(1_000);
    expect((await jobsOf(farm, [gpuJob]))[0].status).toBe("pending");

    const gpu = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[1]], withPath(fakeNvidiaSmi(["NVIDIA GeForce RTX 3080, 10240", "Tesla T4, 15360"])));
    clis.push(gpu);
    const [row] = await waitForJobs(farm, [gpuJob], 30_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${gpu.lines.join("\n")}\n${gpu.stderr()}`);
    });
    expect(row).toMatchObject({ status: "succeeded", workerId: farm.seeded.workerIds[1] });
    expect((await workerRow(1))?.facts?.gpus).toEqual([
      { vendor: "nvidia", model: "NVIDIA GeForce RTX 3080", vramMB: 10_240 },
      { vendor: "nvidia", model: "Tesla T4", vramMB: 15_360 },
    ]);
    expect(plain.lines.some((l) => l.includes(gpuJob))).toBe(false);
  });

  it("SIGUSR1 freezes the running job (its process stops; the farm shows it suspended, lease kept); SIGUSR2 thaws it", async () => {
    const cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0]]);
    clis.push(cli);
    await waitForLine(cli, /working on/);
    const client = connect(farm);
    const id = (await client.mutation(anyApi.jobs.submit, { clientKey: farm.seeded.clientKey, type: "demo.primes", payload: { n: 2_000_000_000 }, leaseMs: 5_000 })) as Id<"jobs">;
    await waitForLine(cli, new RegExp(`job ${id} demo.primes started`));
    let runners: number[] = [];
    await until("its runner runs", () => (runners = runnersOf(cli)).some((pid) => procState(pid) === "R" || procState(pid) === "S"));

    cli.child.kill("SIGUSR1");
    await waitForLine(cli, /suspending: freezing running jobs/);
    await until("the job's process is stopped", () => runners.some((pid) => procState(pid) === "T"));
    await until("the farm shows it suspended", async () => (await jobsOf(farm, [id]))[0].suspendedSince !== undefined);
    // Past the 5 s lease: the suspended heartbeats keep it.
    await sleep(7_000);
    expect((await jobsOf(farm, [id]))[0]).toMatchObject({ status: "running", attempt: 1 });

    cli.child.kill("SIGUSR2");
    await until("the job's process runs again", () => runners.every((pid) => procState(pid) !== "T"));
    await until("the farm shows it running", async () => (await jobsOf(farm, [id]))[0].suspendedSince === undefined);
    await client.mutation(anyApi.jobs.cancel, { clientKey: farm.seeded.clientKey, jobId: id });
    expect((await waitForJobs(farm, [id], 30_000))[0].status).toBe("canceled");
  });
});
