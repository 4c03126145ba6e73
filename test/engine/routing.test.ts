import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

/** A recipes file declaring recipe.shout (upper-cases `word`). */
function shoutRecipes(): string {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-routing-"));
  const script = join(dir, "shout.js");
  writeFileSync(script, `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify({upper:JSON.parse(s).word.toUpperCase()})));`);
  const file = join(dir, "recipes.json");
  writeFileSync(file, JSON.stringify({ shout: { command: process.execPath, args: [script] } }));
  return file;
}

describe("a job's type routes it (real CLI workers)", () => {
  let farm: Farm;
  const runs: CliRun[] = [];
  beforeAll(async () => {
    farm = await startFarm(2, 2);
  });
  afterAll(async () => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill("SIGTERM");
    await Promise.all(runs.map((r) => r.exited));
    await stopFarm(farm);
  });

  it("an echo-only worker never runs demo.primes; an unknown type waits untouched, then runs once a worker that handles it comes", async () => {
    const echoOnly = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0], "--capabilities", "demo.echo"]);
    runs.push(echoOnly);
    expect(await waitForLine(echoOnly, /working on/)).toMatch(/capabilities: demo\.echo$/);

    const [primes, shout, echo] = await submit(farm, [
      { type: "demo.primes", payload: { n: 2_000 } },
      { type: "recipe.shout", payload: { word: "hello" } },
      { type: "demo.echo", payload: { hi: 1 } },
    ]);
    const [echoed] = await waitForJobs(farm, [echo]);
    expect(echoed).toMatchObject({ status: "succeeded", workerId: farm.seeded.workerIds[0] });
    // the echo-only worker is idle with two jobs in the queue it cannot run: they wait, untouched
    await sleep(1_500);
    const waiting = await jobsOf(farm, [primes, shout]);
    for (const row of waiting) expect(row).toMatchObject({ status: "pending", queue: "ready", attempt: 0 });
    expect((await eventsOf(farm, [primes, shout])).map((e) => e.kind)).toEqual(["submitted", "submitted"]);
    expect(echoOnly.lines.join("\n")).not.toMatch(/demo\.primes|recipe\.shout/);

    // a worker that handles both comes: it runs them, the echo-only one never did
    const full = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[1], "--recipes", shoutRecipes()]);
    runs.push(full);
    const done = await waitForJobs(farm, [primes, shout]);
    expect(done.map((r) => [r.status, r.attempt, r.workerId])).toEqual([
      ["succeeded", 1, farm.seeded.workerIds[1]],
      ["succeeded", 1, farm.seeded.workerIds[1]],
    ]);
    expect(done[1].result).toEqual({ upper: "HELLO" });
    expect(echoOnly.lines.join("\n")).not.toMatch(/demo\.primes|recipe\.shout/);

    // nothing runs on the echo-only worker now: its Ctrl-C says so plainly and it stops
    echoOnly.child.kill("SIGINT");
    await waitForLine(echoOnly, /draining: no job is running; stopping/);
    expect(await echoOnly.exited).toBe(0);
  }, 120_000);
});
