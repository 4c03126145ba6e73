import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "../../convex/contract";
import { seed, startTestServer, type Seeded, type TestServer } from "../server";
import { runFarmhand, spawnCli, waitForLine, type CliRun } from "./cliProcess";

const root = join(__dirname, "..", "..");

type Sdk = typeof import("farmhand/client");

describe("pipelines end to end: the SDK (imported as farmhand/client), dependencies, the farmhand CLI, real CLI workers", () => {
  let server: TestServer;
  let seeded: Seeded;
  let sdk: Sdk;
  const workers: CliRun[] = [];
  const home = mkdtempSync(join(tmpdir(), "farmhand-pipelines-"));

  beforeAll(async () => {
    // the package's own specifier resolves through package.json "exports" to the built bundle
    execFileSync(process.execPath, [join(root, "esbuild.mjs"), "--sdk"], { cwd: root, stdio: "ignore" });
    sdk = await import("farmhand/client");
    server = await startTestServer();
    seeded = await seed(server, 2, { capabilities: ["demo.sum"], maxConcurrentJobs: 4 });
    for (const key of seeded.workerKeys) {
      const worker = spawnCli(["--url", server.url, "--concurrency", "4"], { FARMHAND_KEY: key, XDG_CONFIG_HOME: home });
      workers.push(worker);
    }
    for (const worker of workers) await waitForLine(worker, /working on .*demo\.sum/);
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    await server?.close();
  });

  it("map runs 200 demo.echo jobs in input order; a demo.sum job after the batch returns their sum through result()", async () => {
    const client = new sdk.FarmhandClient({ url: server.url, clientKey: seeded.clientKey });
    try {
      const payloads = Array.from({ length: 200 }, (_, i) => ({ n: i + 1 }));
      const results: unknown[] = [];
      for await (const result of client.map("demo.echo", payloads, { spec: { batchId: "frames" }, window: 64 })) results.push(result);
      expect(results).toEqual(payloads);
      const reduce = await client.submit({ type: "demo.sum", payload: { field: "n" }, dependsOn: { batch: "frames" } });
      expect(await client.result(reduce, { timeoutMs: 30_000 })).toEqual({ sum: 20_100, inputs: 200 });
    } finally {
      await client.close();
    }
  }, 240_000);

  it("a child submitted before its parents finish waits for them; a dead parent cancels its child with dependency_failed", async () => {
    const client = new sdk.FarmhandClient({ url: server.url, clientKey: seeded.clientKey });
    try {
      const [a, b] = await client.submitMany([{ type: "demo.echo", payload: { n: 2, delayMs: 300 } }, { type: "demo.echo", payload: { n: 3, delayMs: 100 } }]);
      const sum = await client.submit({ type: "demo.sum", payload: { field: "n" }, dependsOn: { jobs: [a, b] } });
      expect(await client.result(sum, { timeoutMs: 30_000 })).toEqual({ sum: 5, inputs: 2 });

      const bad = await client.submit({ type: "demo.echo", payload: { delayMs: "soon" }, maxAttempts: 1 });
      const child = await client.submit({ type: "demo.sum", payload: { field: "n" }, dependsOn: { jobs: [bad] } });
      const error = (await client.result(child, { timeoutMs: 30_000 }).catch((e: unknown) => e)) as InstanceType<Sdk["JobFailedError"]>;
      expect(error).toBeInstanceOf(sdk.JobFailedError);
      expect(error).toMatchObject({ jobId: child, status: "canceled", code: "dependency_failed" });
      expect(error.message).toContain(bad);
      const outcomes = [];
      for await (const outcome of client.results([bad, a])) outcomes.push(outcome);
      expect(outcomes.map((o) => o.status).sort()).toEqual(["dead", "succeeded"]);
    } finally {
      await client.close();
    }
  });

  it("farmhand submit --payloads … --wait prints every result; a failure exits 1, bad usage 2; wait --batch and status", async () => {
    const file = join(home, "payloads.jsonl");
    writeFileSync(file, Array.from({ length: 5 }, (_, i) => JSON.stringify({ n: i })).join("\n") + "\n\n");
    const env = { FARMHAND_URL: server.url, FARMHAND_CLIENT_KEY: seeded.clientKey, XDG_CONFIG_HOME: home };
    const run = await runFarmhand(["submit", "--type", "demo.echo", "--payloads", file, "--batch", "cli", "--wait"], env);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const lines = run.out.map((l) => JSON.parse(l) as { jobId: string; status: string; result: { n: number } });
    expect(lines.map((l) => l.result.n).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(lines.every((l) => l.status === "succeeded")).toBe(true);

    const waited = await runFarmhand(["wait", "--batch", "cli"], env);
    expect(waited.code).toBe(0);
    expect(waited.out).toHaveLength(5);
    const status = await runFarmhand(["status", lines[0].jobId], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.out[0])).toMatchObject({ jobId: lines[0].jobId, status: "succeeded" });

    const ids = await runFarmhand(["submit", "--type", "demo.echo", "--payload", '{"n":9}'], env);
    expect(ids.code).toBe(0);
    expect(ids.out).toHaveLength(1);
    const after = await runFarmhand(["submit", "--type", "demo.sum", "--payload", '{"field":"n"}', "--depends-on", ids.out[0], "--wait"], env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.out[0])).toMatchObject({ status: "succeeded", result: { sum: 9, inputs: 1 } });

    const failed = await runFarmhand(["submit", "--type", "demo.echo", "--payload", '{"delayMs":-1}', "--wait"], env);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out[0])).toMatchObject({ status: "dead", code: "dead" });
    for (const usage of [["submit"], ["submit", "--type", "demo.echo", "--payload", "{nope"], ["wait"], ["frobnicate"]]) {
      expect((await runFarmhand(usage, env)).code, usage.join(" ")).toBe(2);
    }
    expect((await runFarmhand(["status", lines[0].jobId], { FARMHAND_URL: server.url, FARMHAND_CLIENT_KEY: "", XDG_CONFIG_HOME: home })).code).toBe(2);
    // a job the farm refuses is a usage error too, in the server's words (not the Convex client's wrapping)
    const tooLarge = join(home, "too-large.jsonl");
    writeFileSync(tooLarge, JSON.stringify({ pad: "x".repeat(LIMITS.payloadBytes + 1) }) + "\n");
    const refused = await runFarmhand(["submit", "--type", "demo.echo", "--payloads", tooLarge], env);
    expect(refused.code, refused.err).toBe(2);
    expect(refused.err).toMatch(/^farmhand submit: .*payload/im);
    expect(refused.err).not.toMatch(/\[CONVEX|Uncaught/);
    const unknownParent = await runFarmhand(["submit", "--type", "demo.echo", "--depends-on", "not-a-job"], env);
    expect(unknownParent.code, unknownParent.err).toBeGreaterThan(0);
    expect(unknownParent.err).toMatch(/no such job "not-a-job"/);
    expect(unknownParent.err).not.toMatch(/\[CONVEX|Uncaught/);
  });

  it("the browser bundle imports nothing from Node", () => {
    const browser = readFileSync(join(root, "dist", "sdk", "client.browser.mjs"), "utf8");
    expect(browser).not.toMatch(/from\s*["']node:|require\(["'](fs|net|tls|http|crypto)["']\)/);
  });
});
