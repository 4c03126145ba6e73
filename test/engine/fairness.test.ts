import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internal } from "../../convex/_generated/api";
import type { Doc, Id } from "../../convex/_generated/dataModel";
import { seed, startTestServer, type Seeded, type TestServer } from "../server";
import { runFarmhand, spawnCli, waitForLine, type CliRun } from "./cliProcess";

/**
 * Fair share end to end (docs/API.md "Sharing the farm"): real `farmhand-worker` processes on the loopback server,
 * two client keys. Key A queues 160 one-second jobs, then key B 8 (through `farmhand submit --fairness-key`): B's
 * jobs run beside A's — each freed slot goes to the key with fewer turns — not after A's queue drains.
 */
describe("two client keys share the farm", () => {
  let server: TestServer;
  let seeded: Seeded;
  const workers: CliRun[] = [];
  const home = mkdtempSync(join(tmpdir(), "farmhand-fairness-"));
  const SLOTS = 4;

  beforeAll(async () => {
    server = await startTestServer();
    seeded = await seed(server, 4, { maxConcurrentJobs: SLOTS });
    for (const key of seeded.workerKeys) {
      workers.push(spawnCli(["--url", server.url, "--concurrency", String(SLOTS)], { FARMHAND_KEY: key, XDG_CONFIG_HOME: home }));
    }
    for (const worker of workers) await waitForLine(worker, /working on .*demo\.echo/);
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    await server?.close();
  });

  it("A queues 160 one-second jobs, then B 8: B's run beside A's, not after them; all 168 succeed", async () => {
    const b = await server.write(async (t) => await t.mutation(internal.admin.createClientKey, { orgId: seeded.orgId, name: "b" }));
    const second = { delayMs: 1_000 };
    const envOf = (clientKey: string) => ({ FARMHAND_URL: server.url, FARMHAND_CLIENT_KEY: clientKey, XDG_CONFIG_HOME: home });
    const aFile = join(home, "a.jsonl");
    writeFileSync(aFile, Array.from({ length: 160 }, () => JSON.stringify(second)).join("\n"));
    const a = await runFarmhand(["submit", "--type", "demo.echo", "--payloads", aFile], envOf(seeded.clientKey));
    expect(a.code, a.err).toBe(0);
    expect(a.out).toHaveLength(160);
    const bFile = join(home, "b.jsonl");
    writeFileSync(bFile, Array.from({ length: 8 }, () => JSON.stringify(second)).join("\n"));
    const bRun = await runFarmhand(["submit", "--type", "demo.echo", "--payloads", bFile, "--fairness-key", "tenant-1"], envOf(b.key));
    expect(bRun.code, bRun.err).toBe(0);
    expect(bRun.out).toHaveLength(8);

    const jobsOf = async (ids: string[]) => await server.t.run(async (ctx) => (await Promise.all(ids.map((id) => ctx.db.get(id as Id<"jobs">)))) as Doc<"jobs">[]);
    const all = [...a.out, ...bRun.out];
    let jobs = await jobsOf(all);
    for (let i = 0; i < 1_500 && jobs.some((j) => j.status !== "succeeded"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      jobs = await jobsOf(all);
    }
    expect(jobs.map((j) => j.status)).toEqual(Array(168).fill("succeeded"));
    const [aJobs, bJobs] = [jobs.slice(0, 160), jobs.slice(160)];
    expect(bJobs.every((j) => j.fairnessKey === "tenant-1")).toBe(true);
    // FIFO would start B's jobs only after all 160 of A's; shared, A's queue is far from drained when B's last starts
    const lastB = Math.max(...bJobs.map((j) => j.startedAt!));
    const aAfter = aJobs.filter((j) => j.startedAt! > lastB).length;
    expect(aAfter).toBeGreaterThanOrEqual(100);
    // and B was done long before A
    const lastA = Math.max(...aJobs.map((j) => j.finishedAt!));
    expect(Math.max(...bJobs.map((j) => j.finishedAt!))).toBeLessThan(lastA);
  }, 240_000);
});
