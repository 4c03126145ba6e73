// Pause while chosen programs run (farmhand.pauseWhileRunning, farmhand-worker --pause-while-running): a real process
// started by the test — Debian's `sleep`, copied under a chosen name — is seen in /proc, and the headless worker
// freezes its running job and takes nothing new until it ends.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anyApi } from "convex/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Id } from "../../../convex/_generated/dataModel";
import { defaultMachineReaders, MachineWatch, type MachineSeen } from "../../../extension/policy/machineWatch";
import { linuxProcessNames, runningOf } from "../../../extension/policy/runningPrograms";
import { procState, runnersOf, spawnCli, waitForLine, type CliRun } from "../cliProcess";
import { connect, jobRowsOf, sleep, startFarm, stopFarm, type Farm } from "../helpers";

const dir = mkdtempSync(join(tmpdir(), "farmhand-programs-"));
/** Longer than the 15 characters Linux keeps in /proc/<pid>/comm, so the whole name must come from argv[0]. */
const GAME = `farmhand-test-game-${process.pid}`;

/** The program `name` running (a copy of `sleep` under that name); kill it to end it. */
function startProgram(name: string): ChildProcess {
  const path = join(dir, name);
  copyFileSync("/bin/sleep", path);
  const child = spawn(path, ["600"], { stdio: "ignore" });
  running.push(child);
  return child;
}
const running: ChildProcess[] = [];

async function end(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

describe.runIf(process.platform === "linux")("programs that pause donating", () => {
  afterEach(async () => {
    await Promise.all(running.splice(0).map(end));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("/proc shows a running program by its whole name (past comm's 15 characters), matched case-insensitively, and not once it ended", async () => {
    const game = startProgram(GAME);
    const names = await until("the program in /proc", () => linuxProcessNames(), (n) => n?.includes(GAME) === true);
    expect(names).toContain(GAME.slice(0, 15)); // comm, cut short
    expect(runningOf(names!, ["steam", GAME.toUpperCase()])).toBe(GAME.toUpperCase());
    expect(runningOf(names!, ["steam"])).toBeUndefined();
    await end(game);
    expect(runningOf((await linuxProcessNames())!, [GAME])).toBeUndefined();
  });

  it("the watch says when a program of either list starts and ends, from the real process list", async () => {
    const seen: MachineSeen[] = [];
    const gpuGame = `${GAME}-gpu`;
    const watch = new MachineWatch({ ...defaultMachineReaders("linux"), metered: () => Promise.resolve(undefined) }, () => ({ pause: [GAME], pauseGpu: [gpuGame] }), (s) => seen.push(s), 100);
    try {
      watch.start();
      await until("the first look", () => seen.length, (n) => n >= 1);
      expect(seen[0]).toEqual({});
      const game = startProgram(GAME);
      await until("the game seen", () => watch.latest, (s) => s.program === GAME);
      const gpu = startProgram(gpuGame);
      await until("the GPU program seen", () => watch.latest, (s) => s.gpuProgram === gpuGame);
      await end(game);
      await until("the game's end seen", () => watch.latest, (s) => s.program === undefined);
      expect(watch.latest.gpuProgram).toBe(gpuGame);
      await end(gpu);
      await until("the GPU program's end seen", () => watch.latest, (s) => s.gpuProgram === undefined);
    } finally {
      watch.dispose();
    }
  });

  describe("farmhand-worker --pause-while-running", () => {
    let farm: Farm;
    const clis: CliRun[] = [];
    beforeAll(async () => {
      farm = await startFarm(1, 1);
    });
    afterEach(() => {
      for (const cli of clis.splice(0)) if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
    });
    afterAll(async () => {
      await stopFarm(farm);
    });

    // a short lease: heartbeats (which carry progress) every 2 s
    const submit = async (type: string, payload: unknown) =>
      (await connect(farm).mutation(anyApi.jobs.submit, { clientKey: farm.seeded.clientKey, type, payload, leaseMs: 6_000 })) as Id<"jobs">;

    it("freezes the running job (its process stops) and takes nothing new while the program runs; works again once it ends", async () => {
      const cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--pause-while-running", `steam,${GAME}`]);
      clis.push(cli);
      await waitForLine(cli, /working on /);
      const long = await submit("demo.primes", { n: 2_000_000_000 });
      let runners: number[] = [];
      await until("its runner runs", () => (runners = runnersOf(cli)), (pids) => pids.some((pid) => procState(pid) === "R" || procState(pid) === "S"));

      const game = startProgram(GAME);
      await waitForLine(cli, new RegExp(`${GAME} is running: freezing running jobs, taking nothing new`));
      await until("the job's process stopped", () => runners.map(procState), (states) => states.includes("T"));
      await until("the farm shows it suspended", async () => (await jobRowsOf(farm, [long]))[0], (j) => j.suspendedSince !== undefined);
      const echo = await submit("demo.echo", { n: 1 });
      await sleep(2_500);
      expect((await jobRowsOf(farm, [echo]))[0].status).toBe("pending");
      expect((await jobRowsOf(farm, [long]))[0].status).toBe("running"); // held, lease kept

      await end(game);
      await waitForLine(cli, new RegExp(`${GAME} is no longer running: working again`));
      await until("the job's process runs again", () => runners.map(procState), (states) => !states.includes("T"));
      await until("the farm shows it running on", async () => (await jobRowsOf(farm, [long]))[0], (j) => j.suspendedSince === undefined && j.status === "running");
      for (const jobId of [long, echo]) await connect(farm).mutation(anyApi.jobs.cancel, { clientKey: farm.seeded.clientKey, jobId });
    }, 90_000);

    it("takes no work while a named program already runs at start, and takes it once the program ends", async () => {
      const game = startProgram(GAME);
      await until("the program in /proc", () => linuxProcessNames(), (n) => n?.includes(GAME) === true);
      const cli = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--pause-while-running", GAME.toUpperCase()]);
      clis.push(cli);
      await waitForLine(cli, new RegExp(`${GAME.toUpperCase()} is running: freezing`));
      const echo = await submit("demo.echo", { n: 2 });
      await sleep(2_000);
      expect((await jobRowsOf(farm, [echo]))[0].status).toBe("pending");
      await end(game);
      await waitForLine(cli, new RegExp(`${GAME.toUpperCase()} is no longer running: working again`));
      // claimed here (how soon it ends is the lowest-priority job process's business on a busy machine)
      await waitForLine(cli, new RegExp(`job ${echo} demo.echo started`));
      expect((await jobRowsOf(farm, [echo]))[0]).toMatchObject({ workerId: farm.seeded.workerIds[0] });
      await connect(farm).mutation(anyApi.jobs.cancel, { clientKey: farm.seeded.clientKey, jobId: echo });
    }, 60_000);
  });
});
