// `farmhand-worker --when-idle` (issue 23): the headless worker reads the same machine-wide idle sources.
import { anyApi } from "convex/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Id } from "../../../convex/_generated/dataModel";
import { spawnCli, waitForLine, type CliRun } from "../cliProcess";
import { connect, jobsOf, sleep, startFarm, stopFarm, waitForJobs, type Farm } from "../helpers";
import { startXvfb, stopAll } from "./desktop";

const NO_BUS = { DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/bus", DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent/bus" };

describe.runIf(process.platform === "linux")("farmhand-worker --when-idle", () => {
  let farm: Farm;
  let display: string;
  const clis: CliRun[] = [];
  beforeAll(async () => {
    [farm, display] = await Promise.all([startFarm(2, 1), startXvfb()]);
  });
  afterEach(() => {
    for (const cli of clis.splice(0)) if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
  });
  afterAll(async () => {
    await stopFarm(farm);
    await stopAll();
  });

  const submit = async () =>
    (await connect(farm).mutation(anyApi.jobs.submit, { clientKey: farm.seeded.clientKey, type: "demo.echo", payload: { n: 1 } })) as Id<"jobs">;

  it("works once X11 says the machine is idle, naming the source", async () => {
    const cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--when-idle", "0"], { DISPLAY: display, ...NO_BUS });
    clis.push(cli);
    await waitForLine(cli, /idle is read from X11 XScreenSaver$/);
    await waitForLine(cli, /this machine is idle .*: working/);
    const id = await submit();
    const rows = await waitForJobs(farm, [id]);
    expect(rows[0]).toMatchObject({ status: "succeeded", workerId: farm.seeded.workerIds[0] });
  });

  it("takes no work, and says why, where no machine-wide idle source answers", async () => {
    const env = { ...NO_BUS, DISPLAY: "" };
    const cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[1], "--when-idle"], env);
    clis.push(cli);
    await waitForLine(cli, /no machine-wide idle source answers on this machine/);
    const id = await submit();
    await sleep(1_500);
    expect((await jobsOf(farm, [id]))[0].status).toBe("pending");
  });
});
