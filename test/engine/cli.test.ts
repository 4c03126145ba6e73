import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { StoredKey } from "../../extension/cli/keyFile";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, waitForLine } from "./cliProcess";
import { eventsOf, jobsOf, sleep, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

async function waitUntilRunning(farm: Farm, id: Id<"jobs">): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await jobsOf(farm, [id]))[0].status === "running") return;
    await sleep(25);
  }
  throw new Error(`job ${id} never started`);
}

describe("farmhand-worker (the headless CLI)", () => {
  let farm: Farm;
  beforeAll(async () => {
    farm = await startFarm(1, 2);
  });
  afterAll(async () => {
    await stopFarm(farm);
  });

  it("enrolls with a token, keeps the key in a 0600 file, works, drains on SIGINT; the revoked key is refused", async () => {
    const { token } = await farm.server.write((t) =>
      t.mutation(internal.admin.createEnrollment, { orgId: farm.seeded.orgId, capabilities: ["demo.echo", "demo.primes"], maxConcurrentJobs: 2 }),
    );
    const keyFile = join(mkdtempSync(join(tmpdir(), "farmhand-cli-")), "conf", "worker.json");
    const first = spawnCli(["--url", farm.server.url, "--token", token, "--name", "cli-box", "--key-file", keyFile]);
    await waitForLine(first, /enrolled as "cli-box"/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(keyFile, "utf8")) as StoredKey;
    expect(stored).toMatchObject({ url: farm.server.url, name: "cli-box" });
    expect(stored.apiKey).toMatch(/^fh_w_/);

    await waitForLine(first, /working on/);
    const [slow] = await submit(farm, [{ type: "demo.echo", payload: { delayMs: 1_500, n: 1 } }]);
    await waitUntilRunning(farm, slow);
    await waitForLine(first, new RegExp(`job ${slow} demo.echo started`));
    first.child.kill("SIGINT");
    await waitForLine(first, /draining: finishing 1 running job/);
    expect(await first.exited).toBe(0);
    expect((await waitForJobs(farm, [slow]))[0].status).toBe("succeeded");
    expect(first.lines.some((l) => new RegExp(`job ${slow} demo.echo succeeded in \\d+ ms`).test(l))).toBe(true);
    expect(first.lines.at(-1)).toMatch(/worker stopped: drained/);

    // Second start reads the key file.
    const second = spawnCli(["--url", farm.server.url, "--key-file", keyFile]);
    await waitForLine(second, /working on/);
    await farm.server.write((t) => t.mutation(internal.admin.revokeWorker, { workerId: stored.workerId as Id<"workers"> }));
    expect(await second.exited).toBe(4);
    expect(second.lines.join("\n")).toMatch(/worker stopped: this worker's key was revoked \(revoked\)/);
  });

  it("a second SIGINT stops at once and gives the running job back", async () => {
    const run = spawnCli(["--url", farm.server.url, "--key", farm.seeded.workerKeys[0]]);
    await waitForLine(run, /working on/);
    const [long] = await submit(farm, [{ type: "demo.echo", payload: { delayMs: 30_000 } }]);
    await waitUntilRunning(farm, long);
    await waitForLine(run, new RegExp(`job ${long} demo.echo started`));
    run.child.kill("SIGINT");
    await waitForLine(run, /draining/);
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    expect(run.lines.join("\n")).toMatch(/stopping now: giving running jobs back[\s\S]*worker stopped: interrupted/);
    const [row] = await jobsOf(farm, [long]);
    expect(row).toMatchObject({ status: "pending", attempt: 0 });
    expect((await eventsOf(farm, [long])).map((e) => e.kind)).toContain("released");
  });

  it("exits 4 with a clear message for a bad key or an unknown enrollment token", async () => {
    const run = spawnCli(["--url", farm.server.url, "--key", "fh_w_" + "A".repeat(43)]);
    expect(await run.exited).toBe(4);
    expect(run.lines.join("\n")).toMatch(/worker stopped: the server rejected this worker's key \(bad_key\)/);
    const keyFile = join(mkdtempSync(join(tmpdir(), "farmhand-cli-")), "worker.json");
    const enroll = spawnCli(["--url", farm.server.url, "--token", "fh_e_" + "B".repeat(43), "--name", "x", "--key-file", keyFile]);
    expect(await enroll.exited).toBe(4);
    expect(enroll.stderr()).toContain("farmhand-worker: enrollment failed (bad_key): Unknown enrollment token");
  });

  it("exits 3 with a clear message when the URL cannot be reached", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const run = spawnCli(["--url", `http://127.0.0.1:${port}`, "--key", "fh_w_x", "--connect-timeout-ms", "1500"]);
    expect(await run.exited).toBe(3);
    expect(run.stderr()).toContain(`farmhand-worker: cannot reach http://127.0.0.1:${port}: no connection after 1500 ms`);
  });

  it("exits 2 with usage hints for bad arguments, and prints help", async () => {
    const bad = spawnCli(["--url", "ftp://x", "--key", "k"]);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain("farmhand-worker: --url must start with http:// or https://, got ftp://x");
    const noKey = spawnCli(["--url", farm.server.url, "--key-file", join(tmpdir(), "no-such-farmhand-key.json")]);
    expect(await noKey.exited).toBe(2);
    expect(noKey.stderr()).toContain("no worker key: pass --key, or --token and --name to enroll");
    const help = spawnCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.lines[0]).toMatch(/^Usage: farmhand-worker --url/);
  });
});
