import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConvexClient } from "convex/browser";
import type { GenericMutationCtx } from "convex/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import type { DataModel, Id } from "../../convex/_generated/dataModel";
import { seed, startTestServer, type Seeded, type TestServer } from "../server";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { eventsOf, jobsOf, sleep, waitForJobs, type Farm } from "./helpers";

// Farm apps end to end: the example apps are built, published with the CLI's publish command, and run by real
// CLI workers through the loopback server (module download over its HTTP routes, checkpoints, consent).

type Built = Record<"mandelbrot" | "montecarlo" | "primes", string>;

describe("farm apps through real CLI workers", { timeout: 240_000 }, () => {
  let server: TestServer;
  let seeded: Seeded;
  let farm: Farm;
  let built: Built;
  let client: ConvexClient;
  const runs: CliRun[] = [];
  // each worker its own state folder (key file, module cache), like separate machines
  const machine = () => ({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-apps-engine-")) });

  beforeAll(async () => {
    const { buildApps } = await import("../../examples/apps/build.mjs");
    built = buildApps({ log: () => undefined }) as Built;
    server = await startTestServer();
    seeded = await seed(server, 3, { capabilities: ["apps"], maxConcurrentJobs: 2 });
    farm = { server, seeded, clients: [], workers: [], closers: [] };
    client = new ConvexClient(server.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  });
  // A test that fails before stopping its workers must not leave them claiming the next test's jobs.
  afterEach(() => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill("SIGKILL");
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  async function publish(name: keyof Built, extra: string[] = [], key = seeded.publishKey) {
    const run = spawnCli(["publish", "--url", server.url, "--name", name, ...extra, built[name]], { FARMHAND_KEY: key });
    const code = await run.exited;
    return { code, lines: run.lines, stderr: run.stderr() };
  }

  function worker(index: number, extra: string[] = []): CliRun {
    const run = spawnCli(["--url", server.url, "--concurrency", "2", "--max-failures", "0", ...extra], { FARMHAND_KEY: seeded.workerKeys[index], ...machine() });
    runs.push(run);
    return run;
  }

  async function stop(run: CliRun) {
    run.child.kill("SIGTERM");
    await run.exited;
  }

  const submit = (jobs: Array<{ type: string; payload?: unknown; maxAttempts?: number }>) =>
    client.mutation(api.jobs.submitBatch, { clientKey: seeded.clientKey, jobs });

  it("publishes with the CLI: one JSON line; the same bytes again answer the same version; a plain client key is refused (403)", async () => {
    const first = await publish("mandelbrot", ["--memory-mb", "64", "--timeout-ms", "60000"]);
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.lines[0]) as { name: string; version: number; sha256: string };
    expect(answer).toMatchObject({ name: "mandelbrot", version: 1 });
    expect(answer.sha256).toMatch(/^[0-9a-f]{64}$/);
    const again = await publish("mandelbrot", ["--memory-mb", "64", "--timeout-ms", "60000"]);
    expect(JSON.parse(again.lines[0])).toEqual(answer);
    const refused = await publish("primes", [], seeded.clientKey);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/may not publish apps.*canPublish/);
    const badKey = await publish("primes", [], "fh_c_not-a-key");
    expect(badKey.code).toBe(4);
    expect(badKey.stderr).toMatch(/the key was refused \(bad_key\)/);
    expect((await publish("montecarlo")).code).toBe(0);
    expect(await client.query(api.apps.list, { clientKey: seeded.clientKey })).toHaveLength(2);
  });

  it("publish --cache-ttl sets the version's cache default; publishing the same bytes without it makes a version with none", async () => {
    const publishAs = async (extra: string[]) => {
      const run = spawnCli(["publish", "--url", server.url, "--name", "cached", ...extra, built.primes], { FARMHAND_KEY: seeded.publishKey });
      expect(await run.exited).toBe(0);
      return JSON.parse(run.lines[0]) as { version: number; cacheTtlMs?: number };
    };
    expect(await publishAs(["--cache-ttl", "60000"])).toMatchObject({ version: 1, cacheTtlMs: 60_000 });
    expect(await publishAs(["--cache-ttl", "60000"])).toMatchObject({ version: 1, cacheTtlMs: 60_000 });
    const cleared = await publishAs([]);
    expect(cleared.version).toBe(2);
    expect(cleared.cacheTtlMs).toBeUndefined();
    const versions = (await client.query(api.apps.list, { clientKey: seeded.clientKey })).filter((v) => v.name === "cached");
    expect(versions.map((v) => [v.version, v.cacheTtlMs])).toEqual([[1, 60_000], [2, undefined]]);
    // the CLI refuses a ttl the farm would refuse before uploading anything
    const refused = spawnCli(["publish", "--url", server.url, "--name", "cached", "--cache-ttl", "500", built.primes], { FARMHAND_KEY: seeded.publishKey });
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/--cache-ttl must be a whole number from 1000 to 604800000, got 500/);
  });

  it("a worker without --apps never claims an app job; one with --apps downloads the module and runs it", async () => {
    const plain = worker(1);
    await waitForLine(plain, /working on .* capabilities: demo.echo, demo.primes, demo.slow, demo.sum$/);
    const ids = await submit([
      { type: "app.mandelbrot", payload: { x: -0.5, y: 0, span: 3, width: 24, height: 16, maxIter: 50 } },
      { type: "app.mandelbrot", payload: { x: 0, y: 0, span: 1, width: 8, height: 8, maxIter: 20 } },
      { type: "demo.echo", payload: { n: 1 } },
    ]);
    const [echo] = await waitForJobs(farm, [ids[2]]);
    expect(echo.status).toBe("succeeded");
    await sleep(1_000);
    expect((await jobsOf(farm, ids.slice(0, 2))).map((j) => j.status)).toEqual(["pending", "pending"]);

    const donor = worker(0, ["--apps"]);
    await waitForLine(donor, /working on .* capabilities: apps, demo.echo, demo.primes, demo.slow, demo.sum$/);
    const done = await waitForJobs(farm, ids.slice(0, 2));
    expect(done.map((j) => j.status)).toEqual(["succeeded", "succeeded"]);
    const result = done[0].result as { width: number; height: number; png: string };
    expect(result).toMatchObject({ width: 24, height: 16 });
    expect(Buffer.from(result.png, "base64").subarray(1, 4).toString()).toBe("PNG");
    const claims = (await eventsOf(farm, ids.slice(0, 2))).filter((e) => e.kind === "claimed");
    expect(new Set(claims.map((e) => e.workerId))).toEqual(new Set([seeded.workerIds[0]]));
    // the server says succeeded as soon as the complete lands; the CLI logs it once the call has answered
    await waitForLine(donor, new RegExp(`job ${ids[0]} app.mandelbrot v1 succeeded`));
    const view = await client.query(api.jobs.get, { clientKey: seeded.clientKey, jobId: ids[0] });
    expect(view?.app).toMatchObject({ name: "mandelbrot", version: 1 });
    await stop(donor);
    await stop(plain);
  });

  it("a run given back keeps its checkpoint on the server; the next donor resumes from it", async () => {
    const first = worker(2, ["--apps"]);
    await waitForLine(first, /working on/);
    const [jobId] = await submit([{ type: "app.montecarlo", payload: { samples: 150_000_000, checkpointEvery: 500_000, seed: 3 } }]);
    await waitForLine(first, new RegExp(`job ${jobId} app.montecarlo v1 started`));
    const saved = () =>
      server.t.run(async (ctx: GenericMutationCtx<DataModel>) => await ctx.db.query("checkpoints").withIndex("by_job", (q) => q.eq("jobId", jobId)).unique());
    const samplesDone = (checkpoint: { data: string }) => Number(Buffer.from(checkpoint.data, "base64").readBigUInt64LE(12));
    // the first checkpoint is uploaded at once (later ones at most every 5 s, the newest flushed at release)
    for (let i = 0; i < 400 && !(await saved()); i++) await sleep(50);
    const firstUpload = (await saved())!;
    expect(firstUpload.bytes).toBe(36);
    await sleep(1_000);
    first.child.kill("SIGINT");
    await waitForLine(first, /draining/);
    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);
    const handedOver = (await saved())!;
    const job = (await jobsOf(farm, [jobId]))[0];
    expect(job.status).toBe("pending");

    const next = worker(0, ["--apps"]);
    const [finished] = await waitForJobs(farm, [jobId], 150_000);
    expect(finished.status).toBe("succeeded");
    const result = finished.result as { samples: number; resumedFrom: number; pi: number };
    expect(result.samples).toBe(150_000_000);
    // the run resumed from the checkpoint on the server when the first donor gave the job back (that the newest
    // one is flushed before the release is the unit test's business: timing here depends on the machine's load)
    expect(samplesDone(handedOver)).toBeGreaterThanOrEqual(samplesDone(firstUpload));
    expect(result.resumedFrom).toBeGreaterThan(0);
    expect(result.resumedFrom).toBe(samplesDone(handedOver));
    await stop(next);
  });

  it("a module whose bytes do not match the pinned sha256 is not run: the job fails without retry", async () => {
    expect((await publish("primes")).code).toBe(0);
    // the stored module is swapped behind the farm's back (a corrupted or tampered file store)
    await server.t.run(async (ctx: GenericMutationCtx<DataModel>) => {
      const row = (await ctx.db.query("appVersions").collect()).find((v) => v.name === "primes")!;
      const storage = (ctx as unknown as { storage: { store(blob: Blob): Promise<Id<"_storage">> } }).storage;
      const swapped = await storage.store(new Blob([readFileSync(built.mandelbrot)], { type: "application/wasm" }));
      await ctx.db.patch(row._id, { storageId: swapped });
    });
    const [jobId] = await submit([{ type: "app.primes", payload: { n: 1000 }, maxAttempts: 3 }]);
    const donor = worker(0, ["--apps"]);
    const [failed] = await waitForJobs(farm, [jobId]);
    expect(failed.status).toBe("dead");
    expect(failed.attempt).toBe(1);
    expect(failed.error).toMatch(/sha256 is [0-9a-f]{64}, not the pinned [0-9a-f]{64}; it was not run/);
    await stop(donor);
  });

  it("a job pinned to a deleted version is dead-lettered with the reason when a donor claims it", async () => {
    // nobody runs apps now: the job waits, then its version goes
    const [jobId] = await submit([{ type: "app.montecarlo", payload: { samples: 10 } }]);
    const res = await fetch(`${server.url}/api/apps/montecarlo/1`, { method: "DELETE", headers: { authorization: `Bearer ${seeded.publishKey}` } });
    expect(res.status).toBe(200);
    const donor = worker(0, ["--apps"]);
    const [dead] = await waitForJobs(farm, [jobId]);
    expect(dead.status).toBe("dead");
    expect(dead.error).toMatch(/app "montecarlo" v1 was deleted/);
    await expect(client.mutation(api.jobs.submit, { clientKey: seeded.clientKey, type: "app.montecarlo" })).rejects.toMatchObject({
      data: { code: "not_found" },
    });
    await stop(donor);
  });
});
