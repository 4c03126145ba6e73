import { afterEach, describe, expect, it } from "vitest";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { engineWorker, eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

describe("a worker process killed with SIGKILL mid-job", () => {
  let farm: Farm;
  let cli: CliRun | undefined;
  afterEach(async () => {
    if (cli && cli.child.exitCode === null) cli.child.kill("SIGKILL");
    await stopFarm(farm);
  });

  it("loses nothing: the others retry its jobs after the lease and all finish", async () => {
    farm = await startFarm(2, 2);
    cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--concurrency", "2"]);
    await waitForLine(cli, /working on/);
    const ids = await submit(
      farm,
      Array.from({ length: 6 }, (_, i) => ({ type: "demo.echo", payload: { i, delayMs: 4_000 }, leaseMs: 5_000 })),
    );
    const killedWorker = farm.seeded.workerIds[0];
    let held: string[] = [];
    for (let i = 0; i < 200 && held.length < 2; i++) {
      held = (await jobsOf(farm, ids)).filter((r) => r.status === "running" && r.workerId === killedWorker).map((r) => r._id);
      await sleep(50);
    }
    expect(held).toHaveLength(2);
    cli.child.kill("SIGKILL");
    expect(await cli.exited).toBeNull();

    const survivor = engineWorker(farm, 1, { concurrency: 2 });
    await survivor.start();
    const rows = await waitForJobs(farm, ids, 45_000);
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => "succeeded"));
    const events = await eventsOf(farm, ids);
    for (const id of held) {
      const kinds = events.filter((e) => e.jobId === id).map((e) => e.kind);
      expect(kinds).toContain("heartbeat-expired");
      expect(rows.find((r) => r._id === id)!.attempt).toBe(2);
    }
    for (const id of ids) expect(events.filter((e) => e.jobId === id && e.kind === "done")).toHaveLength(1);
  });
});
